"""Part 2: batched matmul backward, each gradient reduced to its input's shape."""

from __future__ import annotations

import numpy as np


def batch_shape(A, B):
    if A.ndim < 2 or B.ndim < 2 or A.shape[-1] != B.shape[-2]:
        raise ValueError("A (..., M, K) and B (..., K, N) are needed")
    return np.broadcast_shapes(A.shape[:-2], B.shape[:-2])


def reduce_to(grad, shape):
    summed = [axis for axis, (g, s) in enumerate(zip(grad.shape, shape)) if g != s]
    reduced = grad.sum(axis=tuple(summed), keepdims=True)
    lead = reduced.ndim - len(shape)
    if lead:
        reduced = reduced.sum(axis=tuple(range(lead)))
    return reduced.reshape(shape)


def batched_matmul_backward(A, B, dC):
    if dC.shape != (*batch_shape(A, B), A.shape[-2], B.shape[-1]):
        raise ValueError("dC must have C's shape")
    dA = reduce_to(dC @ np.swapaxes(B, -1, -2), A.shape)
    dB = reduce_to(np.swapaxes(A, -1, -2) @ dC, B.shape)
    return dA, dB
