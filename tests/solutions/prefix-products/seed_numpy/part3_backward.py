"""The seed's Part 3: a running adjoint swept from the last prefix down (a relative import)."""

import numpy as np

from .part2_out_of_place import prefix_products


def prefix_products_backward(W: np.ndarray, dP: np.ndarray) -> np.ndarray:
    if W.shape != dP.shape:
        raise ValueError("W and dP must have the same shape")
    if W.ndim != 3 or W.shape[1] != W.shape[2]:
        raise ValueError("W must have shape (N, D, D)")
    n, d, _ = W.shape
    P = prefix_products(W)
    dW = np.zeros_like(W)
    adj = np.zeros((d, d), dtype=W.dtype)
    eye = np.eye(d, dtype=W.dtype)
    for i in range(n - 1, -1, -1):
        adj = adj + dP[i]
        left = eye if i == 0 else P[i - 1]
        dW[i] = left.T @ adj
        adj = adj @ W[i].T
    return dW
