"""A known wrong fix: expect.toml says what it is and which check must name it."""

from __future__ import annotations

import torch


def evaluate(model: torch.nn.Module, batches: list[tuple[torch.Tensor, torch.Tensor]]) -> float:
    if not batches:
        raise ValueError("evaluate needs at least one batch")
    total = 0.0
    with torch.no_grad():
        for x, y in batches:
            total += torch.nn.functional.mse_loss(model(x), y).item()
    return total / len(batches)


def running_loss(model: torch.nn.Module, batches: list[tuple[torch.Tensor, torch.Tensor]],
                 lr: float) -> float:
    if not batches:
        raise ValueError("running_loss needs at least one batch")
    if not lr > 0:
        raise ValueError(f"running_loss needs lr > 0, got {lr}")
    optimizer = torch.optim.SGD(model.parameters(), lr=lr)
    losses = []
    for x, y in batches:
        optimizer.zero_grad()
        loss = torch.nn.functional.mse_loss(model(x), y)
        loss.backward()
        optimizer.step()
        losses.append(loss)
    return sum(loss.item() for loss in losses) / len(losses)
