"""Right, and O(N D^3): the running adjoint spelled with np.einsum and np.tensordot, whose flops
the counter counts."""

import numpy as np


def prefix_products_backward(W, dP):
    if W.ndim != 3 or W.shape[1] != W.shape[2] or dP.shape != W.shape:
        raise ValueError("W and dP must both have shape (N, D, D)")
    n, d, _ = W.shape
    prefixes = [np.eye(d, dtype=W.dtype)]
    for i in range(n - 1):
        prefixes.append(np.einsum("ij,jk->ik", prefixes[-1], W[i]))
    dW = np.empty_like(W)
    adjoint = np.zeros((d, d), dtype=W.dtype)
    for i in range(n - 1, -1, -1):
        adjoint = adjoint + dP[i]
        dW[i] = np.tensordot(prefixes[i], adjoint, axes=([0], [0]))
        adjoint = np.einsum("ij,kj->ik", adjoint, W[i])
    return dW
