"""A right O(N D^3) backward whose products are spelled as a broadcast multiply and sum: slower
per product than @, growing like the reference."""

import torch


def _product(a, b):
    return (a[:, :, None] * b[None, :, :]).sum(1)


def prefix_products_backward(W, dP):
    if W.ndim != 3 or W.shape[1] != W.shape[2]:
        raise ValueError("W must be (N, D, D)")
    if dP.shape != W.shape:
        raise ValueError("dP must have W's shape")
    n, d, _ = W.shape
    dW = torch.zeros_like(W)
    if n == 0:
        return dW
    prefixes = [W[0]]
    for i in range(1, n - 1):
        prefixes.append(_product(prefixes[-1], W[i]))
    adjoint = torch.zeros((d, d), dtype=W.dtype)
    for i in range(n - 1, -1, -1):
        adjoint = adjoint + dP[i]
        dW[i] = adjoint if i == 0 else _product(prefixes[i - 1].T, adjoint)
        adjoint = _product(adjoint, W[i].T)
    return dW
