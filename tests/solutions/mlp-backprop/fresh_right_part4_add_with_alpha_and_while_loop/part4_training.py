"""Part 4, torch reference: plain gradient descent and the training loop."""

from __future__ import annotations

import torch

from .part1_forward import mlp_forward
from .part2_loss import softmax_cross_entropy
from .part3_backward import mlp_backward


def sgd_step(params: dict[str, torch.Tensor], grads: dict[str, torch.Tensor],
             lr: float) -> dict[str, torch.Tensor]:
    updated = {}
    for key in params:
        g = grads.get(f"d{key}")
        if g is None or tuple(g.shape) != tuple(params[key].shape):
            raise ValueError(f"gradient for {key} missing or of the wrong shape")
        updated[key] = torch.add(params[key], g, alpha=-lr)
    return updated


def train(params: dict[str, torch.Tensor], X: torch.Tensor, y: torch.Tensor, lr: float,
          steps: int) -> tuple[dict[str, torch.Tensor], list[float]]:
    if steps < 0:
        raise ValueError(f"steps must be >= 0, got {steps}")
    history: list[float] = []
    current = params
    while len(history) < steps:
        out, cache = mlp_forward(current, X)
        value, g_out = softmax_cross_entropy(out, y)
        history.append(value)
        current = sgd_step(current, mlp_backward(current, cache, g_out), lr)
    return current, history
