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
    check_labels(logits, y)
    B = logits.shape[0]
    m = np.max(logits, axis=-1, keepdims=True)
    lse = m + np.log(np.sum(np.exp(logits - m), axis=-1, keepdims=True))
    picked = np.take_along_axis(logits, y[:, None].astype(np.intp), axis=-1)
    loss = np.mean(lse - picked) if B else np.float64("nan")
    grad = np.exp(logits - lse)
    np.add.at(grad, (np.arange(B), y), -1)
    grad /= B if B else 1
    return float(loss), grad
