"""Right values, wrong cost, and the cost hidden: the closed form's suffix products go through
torch.ops.aten.mm, which a TorchFunctionMode never sees, so the matmul counter finds only the
forward's linear work. The CPU time, read outside the process, still grows like N^2."""

import torch

from .part2_out_of_place import prefix_products

mm = torch.ops.aten.mm


def prefix_products_backward(W, dP):
    if W.ndim != 3 or W.shape[1] != W.shape[2] or dP.shape != W.shape:
        raise ValueError("W and dP must both have shape (N, D, D)")
    P = prefix_products(W)
    dW = torch.empty_like(W)
    for j in range(len(W)):
        total = dP[j]
        suffix = None
        for i in range(j + 1, len(W)):
            suffix = W[i] if suffix is None else mm(suffix, W[i])
            total = total + mm(dP[i], suffix.T)
        dW[j] = total if j == 0 else mm(P[j - 1].T, total)
    return dW
