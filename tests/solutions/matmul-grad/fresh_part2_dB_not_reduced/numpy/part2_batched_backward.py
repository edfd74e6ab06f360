"""Buggy: dA is summed back to A's shape but dB is returned at the broadcast shape, never reduced."""

from __future__ import annotations

import numpy as np


def batch_shape(A: np.ndarray, B: np.ndarray) -> tuple[int, ...]:
    """Broadcast batch shape of A (..., M, K) @ B (..., K, N); ValueError if incompatible."""
    if A.ndim < 2 or B.ndim < 2:
        raise ValueError(f"A and B must have at least 2 dims, got {A.shape} and {B.shape}")
    if A.shape[-1] != B.shape[-2]:
        raise ValueError(f"inner sizes differ: {A.shape} @ {B.shape}")
    return np.broadcast_shapes(A.shape[:-2], B.shape[:-2])


def sum_to_shape(grad: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """Sum grad over the axes along which an input of `shape` was broadcast."""
    while grad.ndim > len(shape):
        grad = grad.sum(axis=0)
    axes = tuple(i for i, n in enumerate(shape) if n == 1)
    return grad.sum(axis=axes, keepdims=True) if axes else grad


def batched_matmul_backward(A: np.ndarray, B: np.ndarray,
                            dC: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(dA, dB) for the broadcasting matmul C = A @ B."""
    expected = (*batch_shape(A, B), A.shape[-2], B.shape[-1])
    if dC.shape != expected:
        raise ValueError(f"dC must be {expected}, got {dC.shape}")
    dA = sum_to_shape(dC @ np.swapaxes(B, -1, -2), A.shape)
    dB = np.swapaxes(A, -1, -2) @ dC
    return dA, dB
