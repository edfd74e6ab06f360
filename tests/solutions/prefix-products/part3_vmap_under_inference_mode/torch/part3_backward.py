"""Part 3, written unusually: suffix adjoints by a reversed cumulative loop, products batched
with torch.func.vmap, under inference mode."""
import torch
from torch.func import vmap


@torch.inference_mode()
def prefix_products_backward(W, dP):
    if W.ndim != 3 or W.shape[-1] != W.shape[-2]:
        raise ValueError("W must be (N, D, D)")
    if dP.shape != W.shape:
        raise ValueError("dP must have W's shape")
    n, d = W.shape[0], W.shape[-1]
    if n == 0:
        return torch.empty_like(W)
    prefixes = [torch.eye(d, dtype=W.dtype, device=W.device)]
    for i in range(n - 1):
        prefixes.append(prefixes[-1] @ W[i])
    P = torch.stack(prefixes)            # P[i] = W[0] ... W[i-1]
    adjoints = []
    adj = torch.zeros((d, d), dtype=W.dtype, device=W.device)
    for i in reversed(range(n)):
        adj = adj + dP[i]
        adjoints.append(adj)
        adj = adj @ W[i].mT
    A = torch.stack(adjoints[::-1])
    return vmap(lambda p, a: p.mT @ a)(P, A).clone()
