"""Part 1: a training loop whose steps do not add up (torch).

`train` below runs, and its loss even falls at first, but it has one autograd bug. Find it, fix
it (keep the rest of the function as it is), and say what was wrong in EXPLANATION.

Run `grader check part1` to grade this file; `grader hint part1` when stuck.
"""

from __future__ import annotations

import torch

# In a few sentences: what was wrong, what symptom it causes, and what the fix is.
EXPLANATION = ""


def train(model: torch.nn.Module, batches: list[tuple[torch.Tensor, torch.Tensor]], lr: float,
          steps: int) -> list[float]:
    """Train `model` for `steps` steps of plain SGD (torch.optim.SGD, no momentum) on the mean
    squared error, step t on batches[t % len(batches)]; return the step losses as floats.

    Each step's update must use the gradient of that step's loss alone, whatever .grad held
    when train was called. Raises ValueError when batches is empty, lr <= 0 or steps < 0.
    """
    if not batches:
        raise ValueError("train needs at least one batch")
    if not lr > 0 or steps < 0:
        raise ValueError(f"train needs lr > 0 and steps >= 0, got lr={lr}, steps={steps}")
    optimizer = torch.optim.SGD(model.parameters(), lr=lr)
    losses = []
    for step in range(steps):
        x, y = batches[step % len(batches)]
        loss = torch.nn.functional.mse_loss(model(x), y)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return losses
