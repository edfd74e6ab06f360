"""Part 2: batched matmul backward."""

from __future__ import annotations

import numpy as np


def batch_shape(A, B):
    if A.ndim < 2 or B.ndim < 2:
        raise ValueError("need 2-D at least")
    if A.shape[-1] != B.shape[-2]:
        raise ValueError("inner sizes differ")
    return np.broadcast_shapes(A.shape[:-2], B.shape[:-2])


def _reduce(g, shape):
    while g.ndim > len(shape):
        g = g.sum(axis=0)
    for axis, size in enumerate(shape):
        if size == 1 and g.shape[axis] != 1:
            g = g.sum(axis=axis, keepdims=True)
    return g


def batched_matmul_backward(A, B, dC):
    expected = (*batch_shape(A, B), A.shape[-2], B.shape[-1])
    if dC.shape != expected:
        raise ValueError("dC has the wrong shape")
    dA = np.matmul(dC, B.T)
    dB = np.matmul(A.T, dC)
    return _reduce(dA, A.shape), _reduce(dB, B.shape)
