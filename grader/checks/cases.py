"""Test inputs: well-scaled random matrix stacks over many shapes and both float dtypes.

Long products of plain Gaussian matrices explode or vanish, which hides order mistakes behind
inf and 0. Each W[i] here is U @ diag(exp(0.2 g)) @ V with U, V random orthogonal, so the
singular values of a product random-walk slowly around 1 and every factor's order matters.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

# (N, D): singletons, powers of two and not, N = 1 edge cases, D = 1 and D = 8.
FORWARD_SHAPES: tuple[tuple[int, int], ...] = (
    (1, 1), (1, 3), (2, 2), (3, 3), (5, 3), (8, 2), (17, 3),
    (4, 8), (16, 8), (33, 1), (64, 4), (7, 2), (12, 3),
)
SMALL_SHAPES: tuple[tuple[int, int], ...] = ((1, 2), (2, 3), (3, 2), (5, 3), (8, 3), (13, 2))
DTYPES: tuple[str, ...] = ("float64", "float32")


@dataclass(frozen=True)
class Case:
    """One input: W, an upstream gradient dP of the same shape, and how to name it."""

    W: np.ndarray
    dP: np.ndarray

    @property
    def n(self) -> int:
        return int(self.W.shape[0])

    @property
    def d(self) -> int:
        return int(self.W.shape[1])

    @property
    def dtype(self) -> str:
        return str(self.W.dtype)

    def describe(self) -> str:
        return f"N={self.n}, D={self.d}, {self.dtype}"


def random_orthogonal(rng: np.random.Generator, n: int, d: int) -> np.ndarray:
    """n Haar-random d x d orthogonal matrices (QR with the sign fix)."""
    q, r = np.linalg.qr(rng.standard_normal((n, d, d)))
    signs = np.sign(np.diagonal(r, axis1=-2, axis2=-1))
    signs[signs == 0] = 1.0
    return q * signs[:, None, :]


def well_scaled(rng: np.random.Generator, n: int, d: int) -> np.ndarray:
    """n well-conditioned d x d matrices with singular values near 1 (float64)."""
    if n == 0:
        return np.zeros((0, d, d))
    singular = np.exp(0.2 * rng.standard_normal((n, d)))
    return random_orthogonal(rng, n, d) * singular[:, None, :] @ random_orthogonal(rng, n, d)


def make_case(rng: np.random.Generator, n: int, d: int, dtype: str = "float64") -> Case:
    W = well_scaled(rng, n, d).astype(dtype)
    dP = rng.standard_normal((n, d, d)).astype(dtype)
    return Case(W=W, dP=dP)


def make_cases(
    rng: np.random.Generator,
    shapes: tuple[tuple[int, int], ...] = FORWARD_SHAPES,
    dtypes: tuple[str, ...] = DTYPES,
) -> list[Case]:
    """Every shape in float64; the shapes with N > 1 again in float32."""
    cases = [make_case(rng, n, d, "float64") for n, d in shapes]
    for dtype in dtypes:
        if dtype != "float64":
            cases += [make_case(rng, n, d, dtype) for n, d in shapes if n > 1]
    return cases


def bad_shapes(n: int = 4, d: int = 3) -> list[tuple[str, tuple[int, ...], tuple[int, ...]]]:
    """(description, W shape, second-argument shape) triples that must raise ValueError."""
    return [
        ("W has ndim 2", (d, d), (d, d)),
        ("W has ndim 4", (n, 1, d, d), (n, 1, d, d)),
        ("W is not square", (n, d, d + 1), (n, d, d + 1)),
        ("second argument has a different N", (n, d, d), (n + 1, d, d)),
        ("second argument has a different D", (n, d, d), (n, d + 1, d + 1)),
    ]
