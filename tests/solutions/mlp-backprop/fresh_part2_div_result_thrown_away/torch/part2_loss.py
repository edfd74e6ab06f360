"""Part 2: softmax cross-entropy by hand (torch)."""

from __future__ import annotations

import torch


def softmax_cross_entropy(logits: torch.Tensor, y: torch.Tensor) -> tuple[float, torch.Tensor]:
    if logits.ndim != 2:
        raise ValueError(f"logits must be (B, C), got {tuple(logits.shape)}")
    batch, classes = logits.shape
    if y.shape != (batch,):
        raise ValueError(f"y must be ({batch},), got {tuple(y.shape)}")
    if y.dtype.is_floating_point or y.dtype.is_complex or y.dtype == torch.bool:
        raise ValueError(f"y must hold integer labels, got {y.dtype}")
    if batch and (int(y.min()) < 0 or int(y.max()) >= classes):
        raise ValueError(f"labels must lie in [0, {classes})")
    shifted = logits - logits.amax(dim=1, keepdim=True)
    lse = shifted.exp().sum(dim=1, keepdim=True).log()
    log_probs = shifted - lse
    rows = torch.arange(batch, device=logits.device)
    loss = -log_probs[rows, y].mean()
    probs = log_probs.exp()
    probs[rows, y] -= 1
    probs.div(batch)
    return loss.item(), probs
