"""The truth every judge compares against: the numpy references, evaluated in float64.

Judging always upcasts to float64 and uses numpy, whatever the candidate's flavor, so a float32
answer is measured against the exact product rather than against another rounding of it.
"""

from __future__ import annotations

import math
from functools import cache

import numpy as np

from grader.parts import PART1, PART3, PART4
from grader.references import load_reference_part


@cache
def _numpy_part(part_id: str):  # type: ignore[no-untyped-def]
    part = {"part1": PART1, "part3": PART3, "part4": PART4}[part_id]
    return load_reference_part(part, "numpy")


def forward(W: np.ndarray) -> np.ndarray:
    W64 = W.astype(np.float64)
    return _numpy_part("part1").prefix_products_out(W64, np.empty_like(W64))


def backward(W: np.ndarray, dP: np.ndarray) -> np.ndarray:
    return _numpy_part("part3").prefix_products_backward(
        W.astype(np.float64), dP.astype(np.float64)
    )


def scan_levels(W: np.ndarray) -> list[tuple[int, np.ndarray]]:
    return _numpy_part("part4").hillis_steele_scan_forward(W.astype(np.float64))[1]


def expected_levels(n: int) -> int:
    """ceil(log2 N) levels for N >= 1 (none for N = 1)."""
    return math.ceil(math.log2(n)) if n > 1 else 0


def loss(W: np.ndarray, dP: np.ndarray) -> float:
    """The scalar whose gradient the backward computes: sum(P * dP)."""
    return float(np.sum(forward(W) * dP))


def finite_differences(W: np.ndarray, dP: np.ndarray, eps: float = 1e-6) -> np.ndarray:
    """Central differences of sum(P * dP) w.r.t. every entry of W, in float64."""
    W64 = W.astype(np.float64)
    grad = np.empty_like(W64)
    for index in np.ndindex(*W64.shape):
        plus, minus = W64.copy(), W64.copy()
        plus[index] += eps
        minus[index] -= eps
        grad[index] = (loss(plus, dP) - loss(minus, dP)) / (2 * eps)
    return grad
