"""Buggy: validates with assert, so a bad shape raises AssertionError (or nothing under -O)."""

from .part2_out_of_place import prefix_products


def prefix_products_backward(W, dP):
    assert W.ndim == 3 and W.shape[1] == W.shape[2] and dP.shape == W.shape
    P = prefix_products(W)
    dW = W * 0
    adjoint = W.sum(0) * 0
    for i in range(len(W) - 1, -1, -1):
        adjoint = adjoint + dP[i]
        dW[i] = adjoint if i == 0 else P[i - 1].T @ adjoint
        adjoint = adjoint @ W[i].T
    return dW
