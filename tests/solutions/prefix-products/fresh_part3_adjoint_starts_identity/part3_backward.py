"""Part 3, numpy reference: hand-written backward of the prefix products."""

from __future__ import annotations

import numpy as np

from .part2_out_of_place import prefix_products


def prefix_products_backward(W: np.ndarray, dP: np.ndarray) -> np.ndarray:
    """Return dW given dP[i] = dL/dP[i]. O(N * D^3) time.

    P[i] = P[i-1] @ W[i], so for G = dL/dP[i] (all paths): dW[i] = P[i-1]^T @ G and
    P[i-1] receives G @ W[i]^T on top of its own dP[i-1]. Sweeping i downwards keeps that running
    adjoint, which is every later prefix's contribution, without forming suffix products.
    """
    if W.ndim != 3 or W.shape[1] != W.shape[2]:
        raise ValueError(f"W must have shape (N, D, D), got {W.shape}")
    if dP.shape != W.shape:
        raise ValueError(f"dP must have the same shape as W: {dP.shape} != {W.shape}")
    n, d, _ = W.shape
    P = prefix_products(W)
    dW = np.empty_like(W)
    adjoint = np.eye(d, dtype=W.dtype)
    for i in range(n - 1, -1, -1):
        adjoint = adjoint + dP[i]
        left = P[i - 1] if i > 0 else np.eye(d, dtype=W.dtype)
        dW[i] = left.T @ adjoint
        adjoint = adjoint @ W[i].T
    return dW
