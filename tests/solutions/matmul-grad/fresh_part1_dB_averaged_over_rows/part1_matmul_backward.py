"""Buggy: dB is divided by the number of rows M of A, as if the rows were a batch to average over."""

from __future__ import annotations

import numpy as np


def matmul_backward(A: np.ndarray, B: np.ndarray,
                    dC: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(dL/dA, dL/dB) for C = A @ B given dL/dC."""
    if A.ndim != 2 or B.ndim != 2:
        raise ValueError(f"need 2-D A and B, got {A.shape} and {B.shape}")
    m, k = A.shape
    k2, n = B.shape
    if k != k2:
        raise ValueError(f"inner dimensions differ: {A.shape} @ {B.shape}")
    if dC.shape != (m, n):
        raise ValueError(f"dC should be {(m, n)}, got {dC.shape}")
    grad_a = np.dot(dC, B.T)
    # each row of A is one sample; average its contribution
    grad_b = np.dot(A.T, dC) / max(m, 1)
    return grad_a, grad_b
