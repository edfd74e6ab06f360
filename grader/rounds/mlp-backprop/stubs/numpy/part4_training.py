"""Part 4: gradient descent, and a training loop built on Parts 1-3 (numpy flavor).

Import your parts, e.g. `from .part1_forward import mlp_forward`,
`from .part2_loss import softmax_cross_entropy`, `from .part3_backward import mlp_backward`.

Run `grader check part4` to grade this file; `grader hint part4` when stuck.
"""

from __future__ import annotations

import numpy as np


def sgd_step(params: dict[str, np.ndarray], grads: dict[str, np.ndarray],
             lr: float) -> dict[str, np.ndarray]:
    """Return new params {"W1", "b1", "W2", "b2"}: each p - lr * grads["d" + name].

    New arrays in a new dict: the caller's dict and arrays stay exactly as they were.
    Raises ValueError when a gradient's shape differs from its parameter's (even where the
    two would broadcast).
    """
    raise NotImplementedError("Part 4: write sgd_step")


def train(params: dict[str, np.ndarray], X: np.ndarray, y: np.ndarray, lr: float,
          steps: int) -> tuple[dict[str, np.ndarray], list[float]]:
    """Run `steps` steps of full-batch gradient descent on the mean cross-entropy.

    Return (final params, losses): losses[t] is the loss at step t, before that step's update,
    so losses[0] is the loss of the params passed in. Raises ValueError when steps < 0 (and
    wherever your parts raise for malformed X or y). Must not modify params' arrays, X or y.
    """
    raise NotImplementedError("Part 4: write train")
