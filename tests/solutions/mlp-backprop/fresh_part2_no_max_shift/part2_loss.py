"""Buggy: the logits are exponentiated without first subtracting each row's max, so large logits overflow to inf/nan."""

from __future__ import annotations

import numpy as np


def check_labels(logits: np.ndarray, y: np.ndarray) -> None:
    """ValueError unless logits is (B, C) and y holds B integer labels in [0, C)."""
    if logits.ndim != 2:
        raise ValueError(f"logits should be (B, C), got {logits.shape}")
    B, C = logits.shape
    if y.shape != (B,):
        raise ValueError(f"y should be ({B},), got {y.shape}")
    if y.dtype.kind not in "iu":
        raise ValueError(f"y should hold integers, got {y.dtype}")
    if B > 0 and (int(y.min()) < 0 or int(y.max()) >= C):
        raise ValueError(f"labels must be in [0, {C}), got {y.min()} .. {y.max()}")


def softmax_cross_entropy(logits: np.ndarray, y: np.ndarray) -> tuple[float, np.ndarray]:
    """Mean softmax cross-entropy over the batch and its gradient w.r.t. the logits."""
    check_labels(logits, y)
    B = logits.shape[0]
    log_norm = np.log(np.sum(np.exp(logits), axis=1, keepdims=True))
    logp = logits - log_norm
    idx = np.arange(B)
    loss = -np.mean(logp[idx, y])
    grad = np.exp(logp)
    grad[idx, y] -= 1.0
    grad /= B
    return float(loss), grad
