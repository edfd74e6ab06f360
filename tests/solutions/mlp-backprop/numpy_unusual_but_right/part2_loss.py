"""Known-good solution in an unusual style: logaddexp.reduce, a 0-d array loss."""

import numpy as np


def softmax_cross_entropy(logits, y):
    if logits.ndim != 2 or y.shape != logits.shape[:1]:
        raise ValueError("logits must be (B, C) and y (B,)")
    if ((y < 0) | (y >= logits.shape[1])).any():
        raise ValueError("label out of range")
    normaliser = np.logaddexp.reduce(logits, axis=1, keepdims=True)
    log_probs = logits - normaliser
    picked = np.take_along_axis(log_probs, y[:, None], axis=1)
    grad = np.exp(log_probs)
    np.put_along_axis(grad, y[:, None], np.take_along_axis(grad, y[:, None], axis=1) - 1, axis=1)
    return np.asarray(-picked.mean()), grad / len(y)
