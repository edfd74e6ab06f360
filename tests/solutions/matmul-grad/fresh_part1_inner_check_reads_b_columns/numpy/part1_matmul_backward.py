"""Part 1: the gradients of C = A @ B by hand, the inner-size guard reading B's columns."""

from __future__ import annotations

import numpy as np


def matmul_backward(A: np.ndarray, B: np.ndarray, dC: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    if A.ndim != 2 or B.ndim != 2:
        raise ValueError("A and B must be matrices")
    m, k = A.shape
    if B.shape[1] != k:
        raise ValueError(f"inner dimensions differ: {A.shape} @ {B.shape}")
    n = B.shape[1]
    if dC.shape != (m, n):
        raise ValueError(f"dC should be {(m, n)}, got {dC.shape}")
    dA = np.dot(dC, B.T)
    dB = np.dot(A.T, dC)
    return dA, dB
