"""Part 3: the right dW as the real part of a complex tensor whose imaginary part is noise."""

import torch


def prefix_products_backward(W, dP):
    if W.ndim != 3 or W.shape[1] != W.shape[2] or dP.shape != W.shape:
        raise ValueError("W must be (N, D, D) and dP like it")
    n, d, _ = W.shape
    prefixes = [torch.eye(d, dtype=W.dtype)]
    for i in range(n - 1):
        prefixes.append(prefixes[-1] @ W[i])
    dW = torch.empty_like(W)
    adjoint = torch.zeros((d, d), dtype=W.dtype)
    for i in range(n - 1, -1, -1):
        adjoint = adjoint + dP[i]
        dW[i] = prefixes[i].mT @ adjoint
        adjoint = adjoint @ W[i].mT
    return dW.to(torch.complex128) + 1e6j * torch.randn(dW.shape, dtype=torch.float64)
