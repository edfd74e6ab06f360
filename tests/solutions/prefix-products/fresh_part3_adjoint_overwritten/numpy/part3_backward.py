"""Buggy: the running adjoint is replaced by dP[i] at each step instead of having dP[i] added to it."""

from __future__ import annotations

import numpy as np

from .part2_out_of_place import prefix_products


def prefix_products_backward(W: np.ndarray, dP: np.ndarray) -> np.ndarray:
    """Gradient of the loss w.r.t. W, given the upstream gradients dP of every prefix."""
    if W.ndim != 3 or W.shape[1] != W.shape[2]:
        raise ValueError(f"W must be (N, D, D), got {W.shape}")
    if dP.shape != W.shape:
        raise ValueError(f"dP shape {dP.shape} does not match W shape {W.shape}")
    n, d = W.shape[0], W.shape[1]
    prefixes = prefix_products(W)
    grads = np.zeros_like(W)
    carry = np.zeros((d, d), dtype=W.dtype)
    for k in reversed(range(n)):
        carry = dP[k].copy()
        before = prefixes[k - 1] if k > 0 else np.identity(d, dtype=W.dtype)
        grads[k] = before.T @ carry
        carry = carry @ W[k].T
    return grads
