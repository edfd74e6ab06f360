import numpy as np
from .part2_out_of_place import prefix_products

def prefix_products_backward(W, dP):
    if W.ndim != 3 or W.shape[1] != W.shape[2]:
        raise ValueError("W must be (N, D, D)")
    if dP.shape != W.shape:
        raise ValueError("dP must match W")
    N, D, _ = W.shape
    P = prefix_products(W)
    dW = np.zeros_like(W)
    G = np.zeros((D, D), dtype=int)
    for i in reversed(range(N)):
        G += dP[i]
        prev = P[i - 1] if i else np.eye(D, dtype=W.dtype)
        dW[i] = prev.T @ G
        G = G @ W[i].T
    return dW
