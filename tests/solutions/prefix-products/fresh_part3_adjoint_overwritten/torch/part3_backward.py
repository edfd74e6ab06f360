"""Buggy: the running adjoint is replaced by dP[i] at each step instead of having dP[i] added to it."""

from __future__ import annotations

import torch


@torch.no_grad()
def prefix_products_backward(W: torch.Tensor, dP: torch.Tensor) -> torch.Tensor:
    """Gradient of the loss w.r.t. W, given the upstream gradients dP of every prefix."""
    if W.ndim != 3 or W.shape[1] != W.shape[2]:
        raise ValueError(f"W must be (N, D, D), got {tuple(W.shape)}")
    if dP.shape != W.shape:
        raise ValueError(f"dP shape {tuple(dP.shape)} does not match W shape {tuple(W.shape)}")
    n, d = W.shape[0], W.shape[1]
    eye = torch.eye(d, dtype=W.dtype, device=W.device)
    exclusive = [eye]
    for k in range(n - 1):
        exclusive.append(exclusive[-1] @ W[k])
    grads = torch.zeros_like(W)
    carry = torch.zeros(d, d, dtype=W.dtype, device=W.device)
    for k in reversed(range(n)):
        carry = dP[k].clone()
        grads[k] = exclusive[k].transpose(0, 1) @ carry
        carry = carry @ W[k].transpose(0, 1)
    return grads
