"""Part 3, torch reference: hand-written backward of the prefix products (no autograd)."""

from __future__ import annotations

import torch


@torch.no_grad()
def prefix_products_backward(W: torch.Tensor, dP: torch.Tensor) -> torch.Tensor:
    """Return dW given dP[i] = dL/dP[i]. O(N * D^3) time.

    P[i] = P[i-1] @ W[i], so for G = dL/dP[i] (all paths): dW[i] = P[i-1]^T @ G and
    P[i-1] receives G @ W[i]^T on top of its own dP[i-1]. Sweeping i downwards keeps that running
    adjoint, which is every later prefix's contribution, without forming suffix products.
    """
    if W.ndim != 3 or W.shape[1] != W.shape[2]:
        raise ValueError(f"W must have shape (N, D, D), got {tuple(W.shape)}")
    if dP.shape != W.shape:
        raise ValueError(f"dP must have the same shape as W: {tuple(dP.shape)} != {tuple(W.shape)}")
    n, d, _ = W.shape
    # exclusive prefixes E[i] = W[0] ... W[i-1], E[0] = I, written with einsum
    exclusive = []
    running = torch.eye(d, dtype=W.dtype, device=W.device)
    for i in range(n):
        exclusive.append(running)
        running = torch.einsum("ij,jk->ik", running, W[i])
    grads = [None] * n
    suffix = torch.zeros((d, d), dtype=W.dtype, device=W.device)
    i = n - 1
    while i >= 0:
        suffix = suffix + dP[i]
        grads[i] = torch.einsum("ij,jk->ik", exclusive[i], suffix)   # E^T @ G
        suffix = torch.einsum("ij,kj->ik", suffix, W[i])             # G @ W^T
        i -= 1
    if n == 0:
        return torch.empty_like(W)
    return torch.stack(grads)
