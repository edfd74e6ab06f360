"""Buggy: the gradient is returned as (onehot - softmax) / B, the negative of the correct (softmax - onehot) / B."""

from __future__ import annotations

import torch


def check_labels(logits: torch.Tensor, y: torch.Tensor) -> None:
    """ValueError unless logits is (B, C) and y holds B integer labels in [0, C)."""
    if logits.dim() != 2:
        raise ValueError(f"logits should be (B, C), got {tuple(logits.shape)}")
    B, C = logits.shape
    if tuple(y.shape) != (B,):
        raise ValueError(f"y should be ({B},), got {tuple(y.shape)}")
    if y.dtype.is_floating_point or y.dtype.is_complex or y.dtype == torch.bool:
        raise ValueError(f"y should hold integers, got {y.dtype}")
    if B and (int(y.min()) < 0 or int(y.max()) >= C):
        raise ValueError(f"labels must be in [0, {C}), got {int(y.min())} .. {int(y.max())}")


def softmax_cross_entropy(logits: torch.Tensor, y: torch.Tensor) -> tuple[float, torch.Tensor]:
    """Mean softmax cross-entropy over the batch and its gradient w.r.t. the logits."""
    check_labels(logits, y)
    B, C = logits.shape
    top = logits.max(dim=1, keepdim=True).values
    logp = (logits - top) - (logits - top).exp().sum(dim=1, keepdim=True).log()
    onehot = torch.zeros_like(logits)
    onehot[torch.arange(B, device=logits.device), y] = 1.0
    loss = -(logp * onehot).sum() / B
    grad = (onehot - logp.exp()) / B
    return float(loss), grad
