"""Buggy: the running adjoint takes dP[k + 1] instead of dP[k], which reads past the end at the
first step (an IndexError on every valid input). Its names are its own; the statement's shape
is the reference's, so the reference's mutant that raises alike names the slip."""

import torch

from .part2_out_of_place import prefix_products


def prefix_products_backward(W, dP):
    if W.ndim != 3 or W.shape[1] != W.shape[2] or dP.shape != W.shape:
        raise ValueError("W and dP must both be (N, D, D)")
    count, size = W.shape[0], W.shape[1]
    P = prefix_products(W)
    grads = torch.zeros_like(W)
    adj = torch.zeros((size, size), dtype=W.dtype)
    for k in range(count - 1, -1, -1):
        adj = adj + dP[k + 1]
        grads[k] = (P[k - 1] if k > 0 else torch.eye(size, dtype=W.dtype)).T @ adj
        adj = adj @ W[k].T
    return grads
