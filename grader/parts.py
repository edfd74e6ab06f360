"""The registry of the round's four parts: files, functions, weights, budgets and hints.

Plain data, no logic and no heavy imports, so `grader list` and `grader hint` stay instant.
Every other module asks this one what the parts are rather than spelling names again.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Part:
    """One exercise file of the round."""

    id: str
    title: str
    module: str
    functions: tuple[str, ...]
    weight: float
    budget_minutes: float
    hints: tuple[str, ...]

    @property
    def file(self) -> str:
        return f"{self.module}.py"


PART1 = Part(
    id="part1",
    title="In-place forward",
    module="part1_inplace",
    functions=("prefix_products_out",),
    weight=20.0,
    budget_minutes=10.0,
    hints=(
        "Start from the recurrence, not the definition: P[0] = W[0] and P[i] = P[i-1] @ W[i]. "
        "Each slot needs only the slot before it, so one pass over i fills P.",
        "Validate first (W.ndim == 3, square, P.shape == W.shape, ValueError otherwise), return P "
        "at once when N == 0, then write with slice assignment `P[i] = ...` so the values land in "
        "P's own memory. Rebinding the name P (P = something) leaves the caller's buffer "
        "untouched. When P is W, slot i of W is read by the matmul before the assignment "
        "overwrites it.",
        "P[0] = W[0]\nfor i in range(1, n):\n    P[i] = P[i - 1] @ W[i]\nreturn P\n"
        "For EXPLANATION: autograd saves P[i-1] for the backward of each matmul; writing the "
        "next slot bumps the shared version counter, so backward raises instead of using "
        "overwritten values. Fix: out-of-place (torch.stack) or a custom Function with mark_dirty.",
    ),
)

PART2 = Part(
    id="part2",
    title="Out-of-place forward",
    module="part2_out_of_place",
    functions=("prefix_products",),
    weight=15.0,
    budget_minutes=10.0,
    hints=(
        "In numpy, allocate and call Part 1. In torch, ask what autograd needs: every tensor a "
        "matmul saved for backward must still hold the same values when backward runs.",
        "Never write into a tensor after a matmul has read it. Keep each product as its own new "
        "tensor in a Python list and join them once at the end.",
        "products = [W[0]]\nfor i in range(1, n):\n    products.append(products[-1] @ W[i])\n"
        "return torch.stack(products)   # np.stack or Part 1 on np.empty_like(W) in numpy\n"
        "Handle N == 0 by returning an empty (0, D, D) result (e.g. W.clone()).",
    ),
)

PART3 = Part(
    id="part3",
    title="Hand-written backward",
    module="part3_backward",
    functions=("prefix_products_backward",),
    weight=35.0,
    budget_minutes=25.0,
    hints=(
        "Write one step as Y = A @ B with A = P[i-1], B = W[i]. With G = dL/dY: dA = G @ B^T and "
        "dB = A^T @ G. Now remember W[j] feeds every later prefix P[j], P[j+1], ..., P[N-1].",
        "Sweep i from N-1 down to 0 with a running adjoint: first add dP[i] (the direct "
        "gradient of P[i]), then dW[i] = P[i-1]^T @ adjoint (identity when i == 0), then pass "
        "the adjoint down through the matmul: adjoint = adjoint @ W[i]^T. O(N * D^3), no suffix "
        "products.",
        "P = forward(W); adj = zeros(D, D)\nfor i in reversed(range(n)):\n"
        "    adj = adj + dP[i]\n    left = P[i - 1] if i > 0 else eye(D)\n"
        "    dW[i] = left.T @ adj\n    adj = adj @ W[i].T\nreturn dW",
    ),
)

PART4 = Part(
    id="part4",
    title="Hillis-Steele scan",
    module="part4_scan",
    functions=("hillis_steele_scan_forward", "hillis_steele_scan_backward"),
    weight=30.0,
    budget_minutes=30.0,
    hints=(
        "Matmul is associative, so prefixes can combine in a tree: after the level with offset "
        "s, slot i holds the product of the last 2s factors ending at i. It is not commutative: "
        "the lower index is always the left factor.",
        "Forward: step = 1, 2, 4, ... while step < N: new[step:] = old[:-step] @ old[step:], "
        "new[:step] = old[:step], reading only the previous level's snapshot, and keep (step, "
        "old) per level. Backward walks the levels in reverse: for new[i] = A @ B, A gets G @ B^T "
        "and B gets A^T @ G; indices below step pass their gradient through.",
        "for step, old in reversed(levels):\n    g = zeros_like(grad); g[:step] += grad[:step]\n"
        "    g[:-step] += grad[step:] @ old[step:].swapaxes(-1, -2)\n"
        "    g[step:] += old[:-step].swapaxes(-1, -2) @ grad[step:]\n    grad = g\nreturn grad",
    ),
)

PARTS: tuple[Part, ...] = (PART1, PART2, PART3, PART4)
PART_IDS: tuple[str, ...] = tuple(p.id for p in PARTS)
FLAVORS: tuple[str, ...] = ("torch", "numpy")
DEFAULT_FLAVOR = "torch"


def get_part(part_id: str) -> Part:
    """Look a part up by id; KeyError names the valid ids."""
    for part in PARTS:
        if part.id == part_id:
            return part
    raise KeyError(f"unknown part {part_id!r}; valid parts: {', '.join(PART_IDS)}")
