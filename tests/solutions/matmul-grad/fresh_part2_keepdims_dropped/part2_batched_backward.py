"""Buggy: when summing a gradient over the batch axes where the input had size 1, keepdims is left off, so those axes disappear from the gradient's shape."""

from __future__ import annotations

import numpy as np


def batch_shape(A: np.ndarray, B: np.ndarray) -> tuple[int, ...]:
    """Broadcast batch shape of A (..., M, K) @ B (..., K, N); ValueError if incompatible."""
    if min(A.ndim, B.ndim) < 2:
        raise ValueError(f"A and B must have at least 2 dims, got {A.shape} and {B.shape}")
    if A.shape[-1] != B.shape[-2]:
        raise ValueError(f"inner sizes differ: {A.shape} @ {B.shape}")
    return tuple(np.broadcast_shapes(A.shape[:-2], B.shape[:-2]))


def sum_to_shape(grad: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """Reduce a gradient of the broadcast shape back to `shape`."""
    extra = grad.ndim - len(shape)
    if extra > 0:
        grad = grad.sum(axis=tuple(range(extra)))
    stretched = tuple(ax for ax, size in enumerate(shape) if size == 1 and grad.shape[ax] != 1)
    if stretched:
        grad = grad.sum(axis=stretched)
    return grad


def batched_matmul_backward(A: np.ndarray, B: np.ndarray,
                            dC: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(dA, dB) for the broadcasting matmul C = A @ B."""
    want = batch_shape(A, B) + (A.shape[-2], B.shape[-1])
    if dC.shape != want:
        raise ValueError(f"dC must be {want}, got {dC.shape}")
    full_dA = np.matmul(dC, np.swapaxes(B, -2, -1))
    full_dB = np.matmul(np.swapaxes(A, -2, -1), dC)
    return sum_to_shape(full_dA, A.shape), sum_to_shape(full_dB, B.shape)
