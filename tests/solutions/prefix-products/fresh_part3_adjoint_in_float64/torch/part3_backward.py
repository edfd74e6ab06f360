"""dtype hard-coded: the running adjoint is float64 'for accuracy', so for a float32 W the matmul of a float32 prefix with the float64 adjoint raises (torch does not promote in matmul) (fresh batch 5)."""

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
    prefixes = [torch.eye(d, dtype=W.dtype, device=W.device)]
    for i in range(n - 1):
        prefixes.append(prefixes[-1] @ W[i])
    dW = torch.empty_like(W)
    adjoint = torch.zeros((d, d), dtype=torch.float64, device=W.device)  # accumulate in double
    for i in range(n - 1, -1, -1):
        adjoint = adjoint + dP[i]
        dW[i] = prefixes[i].mT @ adjoint
        adjoint = adjoint @ W[i].mT
    return dW
