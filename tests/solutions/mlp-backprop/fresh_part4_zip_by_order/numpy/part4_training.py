"""Part 4 whose sgd_step pairs parameters with gradients by dict order, not by name (fresh batch 5)."""

from __future__ import annotations

import numpy as np

from .part1_forward import mlp_forward
from .part2_loss import softmax_cross_entropy
from .part3_backward import mlp_backward


def sgd_step(params: dict[str, np.ndarray], grads: dict[str, np.ndarray],
             lr: float) -> dict[str, np.ndarray]:
    """New parameters p - lr * dp, in new arrays; the caller's dict and arrays stay as they
    were."""
    for name, value in params.items():
        grad = grads.get("d" + name)
        if grad is None or grad.shape != value.shape:
            raise ValueError(f"d{name} must have {name}'s shape {value.shape}, got "
                             f"{None if grad is None else grad.shape}")
    return {name: value - lr * grad
            for (name, value), grad in zip(params.items(), grads.values())}


def train(params: dict[str, np.ndarray], X: np.ndarray, y: np.ndarray, lr: float,
          steps: int) -> tuple[dict[str, np.ndarray], list[float]]:
    """`steps` steps of full-batch gradient descent; losses[t] is the loss before step t's
    update."""
    if steps < 0:
        raise ValueError(f"steps must be >= 0, got {steps}")
    losses = []
    for _ in range(steps):
        logits, cache = mlp_forward(params, X)
        loss, dlogits = softmax_cross_entropy(logits, y)
        losses.append(loss)
        params = sgd_step(params, mlp_backward(params, cache, dlogits), lr)
    return params, losses
