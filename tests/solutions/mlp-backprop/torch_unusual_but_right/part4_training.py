"""Known-good solution in an unusual style: torch.add with alpha, 0-d tensor losses."""

import torch

from .part1_forward import mlp_forward
from .part2_loss import softmax_cross_entropy
from .part3_backward import mlp_backward


def sgd_step(params, grads, lr):
    for k, v in params.items():
        if grads["d" + k].shape != v.shape:
            raise ValueError(f"d{k} has the wrong shape")
    return {k: torch.add(v, grads["d" + k], alpha=-lr) for k, v in params.items()}


def train(params, X, y, lr, steps):
    if steps < 0:
        raise ValueError("steps must not be negative")
    losses = []
    for _ in range(steps):
        logits, cache = mlp_forward(params, X)
        loss, dlogits = softmax_cross_entropy(logits, y)
        losses.append(loss)
        params = sgd_step(params, mlp_backward(params, cache, dlogits), lr)
    return params, losses
