"""Part 3: the right dW as the real part of a complex array whose imaginary part is noise."""

import numpy as np


def prefix_products_backward(W, dP):
    if W.ndim != 3 or W.shape[1] != W.shape[2] or dP.shape != W.shape:
        raise ValueError("W must be (N, D, D) and dP like it")
    n, d, _ = W.shape
    prefixes = [np.eye(d, dtype=W.dtype)]
    for i in range(n - 1):
        prefixes.append(prefixes[-1] @ W[i])
    dW = np.empty_like(W)
    adjoint = np.zeros((d, d), dtype=W.dtype)
    for i in range(n - 1, -1, -1):
        adjoint = adjoint + dP[i]
        dW[i] = prefixes[i].T @ adjoint
        adjoint = adjoint @ W[i].T
    return dW + 1e6j * np.random.default_rng().standard_normal(dW.shape)
