"""A known wrong fix: expect.toml says what it is and which check must name it."""

from __future__ import annotations

from collections.abc import Iterable

import torch


def sgd_update(params: Iterable[torch.Tensor], lr: float) -> None:
    if not lr > 0:
        raise ValueError(f"sgd_update needs lr > 0, got {lr}")
    for p in params:
        if p.grad is None:
            continue
        p.requires_grad_(False)
        p -= lr * p.grad
