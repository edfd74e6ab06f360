"""A known wrong fix: expect.toml says what it is and which check must name it."""

from __future__ import annotations

import torch


def train(model: torch.nn.Module, batches: list[tuple[torch.Tensor, torch.Tensor]], lr: float,
          steps: int) -> list[float]:
    if not batches:
        raise ValueError("train needs at least one batch")
    if not lr > 0 or steps < 0:
        raise ValueError(f"train needs lr > 0 and steps >= 0, got lr={lr}, steps={steps}")
    optimizer = torch.optim.SGD(model.parameters(), lr=lr)
    losses = []
    for step in range(steps):
        x, y = batches[step % len(batches)]
        with torch.no_grad():
            optimizer.zero_grad()
            loss = torch.nn.functional.mse_loss(model(x), y)
            loss.backward()
            optimizer.step()
        losses.append(loss.item())
    return losses
