"""Part 2: softmax cross-entropy averaged over the batch, and its gradient (numpy flavor).

    loss = mean over i of -log softmax(logits[i])[y[i]]
    dlogits = (softmax(logits) - onehot(y)) / B

Run `grader check part2` to grade this file; `grader hint part2` when stuck.
"""

from __future__ import annotations

import numpy as np


def softmax_cross_entropy(logits: np.ndarray, y: np.ndarray) -> tuple[float, np.ndarray]:
    """Return (loss, dlogits): the mean loss (a Python float or a 0-d array) and its gradient
    w.r.t. the logits, of logits' shape and dtype.

    logits: (B, C) floats. y: (B,) integer labels in [0, C).
    Numerically stable: logits of 1e4 or -1e4 give finite, correct values, with no overflow
    on the way. Raises ValueError when logits is not 2-D, y is not (B,), or a label lies
    outside [0, C). Must not modify logits or y. No autograd: the gradient is by hand.
    """
    raise NotImplementedError("Part 2: write softmax_cross_entropy")
