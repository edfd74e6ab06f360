"""wrong dtype cast: the row indices are made with the logits' float dtype (copied from the lines around), and a float tensor cannot index (IndexError on every valid call) (fresh batch 5)."""

from __future__ import annotations

import torch


def check_labels(logits: torch.Tensor, y: torch.Tensor) -> None:
    """ValueError unless logits is (B, C) and y holds B integer labels in [0, C)."""
    if logits.ndim != 2:
        raise ValueError(f"logits must be (B, C), got {tuple(logits.shape)}")
    batch, classes = logits.shape
    if y.shape != (batch,):
        raise ValueError(f"y must be ({batch},), got {tuple(y.shape)}")
    if y.dtype.is_floating_point or y.dtype.is_complex or y.dtype == torch.bool:
        raise ValueError(f"y must hold integer labels, got {y.dtype}")
    if batch and (int(y.min()) < 0 or int(y.max()) >= classes):
        raise ValueError(f"labels must lie in [0, {classes}), got {int(y.min())} .. "
                         f"{int(y.max())}")


def softmax_cross_entropy(logits: torch.Tensor, y: torch.Tensor) -> tuple[float, torch.Tensor]:
    """(mean cross-entropy, its gradient (softmax - onehot) / B).

    Each row is shifted by its own max before exp, so the largest exponent is 0: nothing
    overflows, and the log of the normaliser is at least 0, so no log(0) either.
    """
    check_labels(logits, y)
    batch = logits.shape[0]
    shifted = logits - logits.amax(dim=1, keepdim=True)
    log_probs = shifted - shifted.exp().sum(dim=1, keepdim=True).log()
    rows = torch.arange(batch, dtype=logits.dtype, device=logits.device)
    loss = -log_probs[rows, y].mean()
    dlogits = log_probs.exp()
    dlogits[rows, y] -= 1
    dlogits /= batch
    return float(loss), dlogits
