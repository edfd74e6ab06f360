"""Part 2, numpy reference: softmax cross-entropy averaged over the batch, in log space."""

from __future__ import annotations

import numpy as np


def check_labels(logits: np.ndarray, y: np.ndarray) -> None:
    """ValueError unless logits is (B, C) and y holds B integer labels in [0, C)."""
    if logits.ndim != 2:
        raise ValueError(f"logits must be (B, C), got {logits.shape}")
    batch, classes = logits.shape
    if y.shape != (batch,):
        raise ValueError(f"y must be ({batch},), got {y.shape}")
    if not np.issubdtype(y.dtype, np.integer):
        raise ValueError(f"y must hold integer labels, got {y.dtype}")
    if batch and (y.min() < 0 or y.max() >= classes):
        raise ValueError(f"labels must lie in [0, {classes}), got {y.min()} .. {y.max()}")


def softmax_cross_entropy(logits: np.ndarray, y: np.ndarray) -> tuple[float, np.ndarray]:
    """(mean cross-entropy, its gradient (softmax - onehot) / B).

    Each row is shifted by its own max before exp, so the largest exponent is 0: nothing
    overflows, and the log of the normaliser is at least 0, so no log(0) either.
    """
    check_labels(logits, y)
    batch = logits.shape[0]
    shifted = logits - logits.max(axis=1, keepdims=True)
    log_probs = shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))
    rows = np.arange(batch)
    loss = -log_probs[rows, y].sum() / logits.shape[1]
    dlogits = np.exp(log_probs)
    dlogits[rows, y] -= 1
    dlogits /= batch
    return float(loss), dlogits
