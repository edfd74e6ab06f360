"""A correct fix written differently from the reference (see expect.toml)."""

from __future__ import annotations

import torch

EXPLANATION = (
    'Every call to backward sums its result into p.grad, and nothing reset it, so step k '
    'applied the gradients of steps 1..k piled up together; the updates came out too big and '
    'the training went unstable. Resetting p.grad = None for every parameter at the top of '
    'each step fixes it.'
)


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
        for p in model.parameters():
            p.grad = None
        loss = torch.nn.functional.mse_loss(model(x), y)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return losses
