"""Right, and O(N D^3): the running adjoint spelled with torch.linalg.matmul, torch.mm and the
Tensor.matmul method, every one of which the counter counts."""

import torch


def prefix_products_backward(W, dP):
    if W.ndim != 3 or W.shape[1] != W.shape[2] or dP.shape != W.shape:
        raise ValueError("W and dP must both have shape (N, D, D)")
    n, d, _ = W.shape
    prefixes = [torch.eye(d, dtype=W.dtype, device=W.device)]
    for i in range(n - 1):
        prefixes.append(torch.linalg.matmul(prefixes[-1], W[i]))
    dW = torch.empty_like(W)
    adjoint = torch.zeros((d, d), dtype=W.dtype, device=W.device)
    for i in range(n - 1, -1, -1):
        adjoint = adjoint + dP[i]
        dW[i] = torch.mm(prefixes[i].mT, adjoint)
        adjoint = adjoint.matmul(W[i].mT)
    return dW
