"""Part 1, numpy reference: the gradients of C = A @ B by hand."""

from __future__ import annotations

import numpy as np


def _reference_checks(A: np.ndarray, B: np.ndarray,
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
    return dC @ B.T, A.T @ dC


TILE = 8


def matmul_backward(A, B, dC):  # noqa: F811 - a tiled version with a tail-block bug
    _reference_checks(A, B, dC)
    K = A.shape[1]
    dA = np.zeros_like(A)
    dB = np.zeros_like(B)
    full = K if K <= TILE else K - K % TILE   # BUG: the last partial tile is dropped
    for k0 in range(0, full, TILE):
        k1 = min(k0 + TILE, K)
        dA[:, k0:k1] = dC @ B[k0:k1].T
        dB[k0:k1] = A[:, k0:k1].T @ dC
    return dA, dB
