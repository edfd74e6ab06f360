"""Part 1, numpy reference: the gradients of C = A @ B by hand."""

from __future__ import annotations

import numpy as np


def matmul_backward(A: np.ndarray, B: np.ndarray, dC: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    if np.ndim(A) != 2 or np.ndim(B) != 2:
        raise ValueError("A and B must be 2-D")
    (m, k), (k2, n) = A.shape, B.shape
    if k != k2:
        raise ValueError(f"cannot multiply {A.shape} by {B.shape}")
    if dC.shape != (m, n):
        raise ValueError(f"dC must be {(m, n)}, got {dC.shape}")
    dA = np.tensordot(dC, B, axes=([1], [1]))   # sum over n of dC[m, n] B[k, n]
    dB = np.tensordot(A, dC, axes=([0], [0]))   # sum over m of A[m, k] dC[m, n]
    return dA, dB
