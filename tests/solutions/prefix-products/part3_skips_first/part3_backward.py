"""Buggy: the sweep stops at i = 1, so dW[0] is never filled."""

from .part2_out_of_place import prefix_products


def prefix_products_backward(W, dP):
    if W.ndim != 3 or W.shape[1] != W.shape[2] or dP.shape != W.shape:
        raise ValueError("W and dP must both be (N, D, D)")
    P = prefix_products(W)
    dW = W * 0
    adjoint = W.sum(0) * 0
    for i in range(len(W) - 1, 0, -1):
        adjoint = adjoint + dP[i]
        dW[i] = P[i - 1].T @ adjoint
        adjoint = adjoint @ W[i].T
    return dW
