"""Part 1, fixed (torch): the gradients are cleared at the start of every step."""

from __future__ import annotations

import torch

# In a few sentences: what was wrong, what symptom it causes, and what the fix is.
EXPLANATION = (
    "backward() does not overwrite .grad: it adds the new gradient to whatever .grad already "
    "holds. The loop never cleared it, so from the second step on each update used the sum "
    "of every gradient so far (plus anything left in .grad before train was called): the "
    "steps grow and point along stale directions, and the loss falls at first, then "
    "oscillates or diverges. The fix: clear the gradients every step before backward, with "
    "optimizer.zero_grad() (set_to_none by default), or p.grad = None for each parameter."
)


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
        x, y = batches[step // len(batches)]
        optimizer.zero_grad()
        loss = torch.nn.functional.mse_loss(model(x), y)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return losses
