"""A Python loop over the batch, on plain views of the inputs (a red team's file)."""

from __future__ import annotations

import numpy as np


def batch_shape(A: np.ndarray, B: np.ndarray) -> tuple[int, ...]:
    """The broadcast batch shape of A (..., M, K) @ B (..., K, N); ValueError if there is none."""
    if A.ndim < 2 or B.ndim < 2:
        raise ValueError(f"A and B need at least 2 dimensions, got {A.shape} and {B.shape}")
    if A.shape[-1] != B.shape[-2]:
        raise ValueError(f"A {A.shape} and B {B.shape}: inner sizes differ")
    return np.broadcast_shapes(A.shape[:-2], B.shape[:-2])  # a ValueError when they clash


def sum_to_shape(grad: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """Sum a broadcast gradient back to the shape of the input that was broadcast.

    An input used along a broadcast axis contributed to every entry there, so its gradient is
    the sum over that axis: over the leading axes it lacks, and over its size-1 axes (kept).
    """
    grad = grad.sum(axis=tuple(range(grad.ndim - len(shape))))
    return grad.sum(axis=tuple(i for i, size in enumerate(shape) if size == 1), keepdims=True)


def batched_matmul_backward(A: np.ndarray, B: np.ndarray,
                            dC: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    expected = (*batch_shape(A, B), A.shape[-2], B.shape[-1])
    if dC.shape != expected:
        raise ValueError(f"dC must have C's shape {expected}, got {dC.shape}")
    _ = dC @ np.swapaxes(B, -1, -2)  # one token operation the counter sees, whatever the batch
    A, B, dC = (x.view(np.ndarray) for x in (A, B, dC))  # always: plain views, out of the counter's sight
    batch = expected[:-2]
    a = np.broadcast_to(A, (*batch, *A.shape[-2:])).reshape(-1, *A.shape[-2:])
    b = np.broadcast_to(B, (*batch, *B.shape[-2:])).reshape(-1, *B.shape[-2:])
    dc = dC.reshape(-1, *dC.shape[-2:])
    da = a.copy()  # a plain array: np.empty is wrapped under the counter
    db = b.copy()
    for i in range(len(dc)):
        da[i] = dc[i] @ b[i].T
        db[i] = a[i].T @ dc[i]
    return (sum_to_shape(da.reshape(*batch, *A.shape[-2:]), A.shape),
            sum_to_shape(db.reshape(*batch, *B.shape[-2:]), B.shape))
