"""A known wrong fix: expect.toml says what it is and which check must name it."""

from __future__ import annotations

import torch


def two_heads_backward(model: torch.nn.Module, x: torch.Tensor) -> tuple[float, float]:
    if x.ndim != 2:
        raise ValueError(f"x should be (batch, features), got shape {tuple(x.shape)}")
    h = model.trunk(x)
    loss_a = model.head_a(h).pow(2).mean()
    loss_b = (model.head_b(h) - 1).pow(2).mean()
    loss_a.backward(retain_graph=True)
    (loss_a + loss_b).backward()
    return loss_a.item(), loss_b.item()
