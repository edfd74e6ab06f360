"""Part 1, numpy reference: the gradients of C = A @ B by hand."""

from __future__ import annotations

import numpy as np


def matmul_backward(A: np.ndarray, B: np.ndarray,
                    dC: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Return (dA, dB) for C = A @ B, given dC = dL/dC.

    C[m, n] = sum_k A[m, k] B[k, n], so dL/dA[m, k] = sum_n dC[m, n] B[k, n] (dC @ B^T) and
    dL/dB[k, n] = sum_m A[m, k] dC[m, n] (A^T @ dC): each gradient has its input's shape.
    """
    if A.ndim != 2 or B.ndim != 2:
        raise ValueError(f"A and B must be 2-D, got shapes {A.shape} and {B.shape}")
    if A.shape[1] != B.shape[0]:
        raise ValueError(f"A {A.shape} and B {B.shape} cannot be multiplied")
    if dC.shape != (A.shape[0], B.shape[1]):
        raise ValueError(f"dC must have C's shape {(A.shape[0], B.shape[1])}, got {dC.shape}")
    return dC @ B.T / B.shape[1], A.T @ dC
