"""A known wrong fix: expect.toml says what it is and which check must name it."""

from __future__ import annotations

import torch


def freeze_encoder(model: torch.nn.Module) -> list[torch.nn.Parameter]:
    model.adapter.requires_grad_(False)
    return [p for p in model.parameters() if p.requires_grad]


def fine_tune(model: torch.nn.Module, x: torch.Tensor, y: torch.Tensor, lr: float) -> float:
    if x.shape[0] != y.shape[0]:
        raise ValueError(f"x has {x.shape[0]} rows but y has {y.shape[0]}")
    trainable = [p for p in model.parameters() if p.requires_grad]
    optimizer = torch.optim.SGD(trainable, lr=lr)
    features = model.encoder(x).detach()  # keep the frozen encoder out of the gradient
    hidden = model.adapter(features)
    loss = torch.nn.functional.mse_loss(model.head(hidden), y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    return loss.item()
