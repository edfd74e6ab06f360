"""Buggy: the adjoint sweep runs from i = 0 upwards instead of from N-1 downwards."""

from __future__ import annotations

import torch


@torch.no_grad()
def prefix_products_backward(W: torch.Tensor, dP: torch.Tensor) -> torch.Tensor:
    """dL/dW from the upstream gradients dP[i] = dL/dP[i], without autograd."""
    if W.dim() != 3 or W.shape[-1] != W.shape[-2]:
        raise ValueError(f"W must be (N, D, D), got {tuple(W.shape)}")
    if dP.shape != W.shape:
        raise ValueError(f"dP must be {tuple(W.shape)}, got {tuple(dP.shape)}")
    n, d, _ = W.shape
    ident = torch.eye(d, dtype=W.dtype, device=W.device)
    left = [ident]
    for j in range(1, n):
        left.append(left[j - 1] @ W[j - 1])
    out = torch.empty_like(W)
    acc = torch.zeros_like(ident)
    for j in range(n):
        acc = acc + dP[j]
        out[j] = left[j].mT @ acc
        acc = acc @ W[j].mT
    return out
