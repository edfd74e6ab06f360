"""The closed form, batched: for each distance k, every suffix product of k factors at once in
one stacked matmul. N calls, as many as a running adjoint makes, but N^2 / 2 products of
D x D in them."""

import numpy as np

from .part2_out_of_place import prefix_products


def prefix_products_backward(W, dP):
    if W.ndim != 3 or W.shape[1] != W.shape[2]:
        raise ValueError("W must be (N, D, D)")
    if dP.shape != W.shape:
        raise ValueError("dP must have W's shape")
    n, d, _ = W.shape
    if n == 0:
        return W.copy()
    P = prefix_products(W)
    total = np.array(dP)
    suffix = np.broadcast_to(np.eye(d, dtype=W.dtype), (n, d, d)).copy()
    for k in range(1, n):
        suffix = np.matmul(suffix[: n - k], W[k:])
        total[: n - k] += np.matmul(dP[k:], suffix.transpose(0, 2, 1))
    dW = total.copy()
    dW[1:] = np.matmul(P[:-1].transpose(0, 2, 1), total[1:])
    return dW
