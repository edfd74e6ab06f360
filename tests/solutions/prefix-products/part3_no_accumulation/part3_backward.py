"""Buggy: each dW[i] sees only dP[i]; what later prefixes sent down is dropped."""

from .part2_out_of_place import prefix_products


def prefix_products_backward(W, dP):
    P = prefix_products(W)
    dW = W * 0
    for i in range(len(W) - 1, -1, -1):
        adjoint = dP[i]
        dW[i] = adjoint if i == 0 else P[i - 1].T @ adjoint
    return dW
