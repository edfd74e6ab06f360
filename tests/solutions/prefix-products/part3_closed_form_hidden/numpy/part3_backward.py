"""Right values, wrong cost, and the cost hidden: plain ndarray views of the inputs hide every
matmul from the counter, which then sees nothing. The CPU time, read outside the process, still
grows like N^2."""

import numpy as np

from .part2_out_of_place import prefix_products


def prefix_products_backward(W, dP):
    W, dP = np.ndarray.view(W, np.ndarray), np.ndarray.view(dP, np.ndarray)
    if W.ndim != 3 or W.shape[1] != W.shape[2] or dP.shape != W.shape:
        raise ValueError("W and dP must both have shape (N, D, D)")
    P = prefix_products(W)
    dW = np.empty_like(W)
    for j in range(len(W)):
        total = dP[j]
        suffix = None
        for i in range(j + 1, len(W)):
            suffix = W[i] if suffix is None else suffix @ W[i]
            total = total + dP[i] @ suffix.T
        dW[j] = total if j == 0 else P[j - 1].T @ total
    return dW
