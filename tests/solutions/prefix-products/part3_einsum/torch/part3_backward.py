"""Right, and O(N D^3): the running adjoint spelled with torch.einsum and torch.tensordot, whose
flops the counter counts."""

import torch


def prefix_products_backward(W, dP):
    if W.ndim != 3 or W.shape[1] != W.shape[2] or dP.shape != W.shape:
        raise ValueError("W and dP must both have shape (N, D, D)")
    n, d, _ = W.shape
    prefixes = [torch.eye(d, dtype=W.dtype, device=W.device)]
    for i in range(n - 1):
        prefixes.append(torch.einsum("ij,jk->ik", prefixes[-1], W[i]))
    dW = torch.empty_like(W)
    adjoint = torch.zeros((d, d), dtype=W.dtype, device=W.device)
    for i in range(n - 1, -1, -1):
        adjoint = adjoint + dP[i]
        dW[i] = torch.tensordot(prefixes[i], adjoint, dims=([0], [0]))
        adjoint = torch.einsum("ij,kj->ik", adjoint, W[i])
    return dW
