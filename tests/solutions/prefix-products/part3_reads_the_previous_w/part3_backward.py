"""Buggy: the adjoint is carried down through W[i - 1] instead of W[i]."""

import numpy as np

from .part2_out_of_place import prefix_products


def prefix_products_backward(W, dP):
    if W.ndim != 3 or W.shape[1] != W.shape[2] or dP.shape != W.shape:
        raise ValueError("W and dP must both be (N, D, D)")
    n, d, _ = W.shape
    P = prefix_products(W)
    dW = np.zeros_like(W)
    carry = np.zeros((d, d), dtype=W.dtype)
    i = n - 1
    while i >= 0:
        carry += dP[i]
        dW[i] = (P[i - 1] if i else np.eye(d, dtype=W.dtype)).T @ carry
        carry = carry @ np.transpose(W[i - 1])
        i -= 1
    return dW
