"""A correct fix written differently from the reference (see expect.toml)."""

from __future__ import annotations

import torch

EXPLANATION = (
    'Without no_grad the evaluation forward builds a graph and saves activations each batch, '
    'and summing the loss tensors keeps a reference to all those graphs, so memory grows '
    'batch after batch. Run evaluation in inference_mode and add up plain Python floats via '
    '.item() (or detached values).'
)


def evaluate(model: torch.nn.Module, batches: list[tuple[torch.Tensor, torch.Tensor]]) -> float:
    if not batches:
        raise ValueError("evaluate needs at least one batch")
    was_training = model.training
    model.eval()
    try:
        with torch.inference_mode():
            losses = [torch.nn.functional.mse_loss(model(x), y).item() for x, y in batches]
    finally:
        model.train(was_training)
    return sum(losses) / len(losses)


def running_loss(model: torch.nn.Module, batches: list[tuple[torch.Tensor, torch.Tensor]],
                 lr: float) -> float:
    if not batches:
        raise ValueError("running_loss needs at least one batch")
    if not lr > 0:
        raise ValueError(f"running_loss needs lr > 0, got {lr}")
    optimizer = torch.optim.SGD(model.parameters(), lr=lr)
    total = torch.zeros(())
    for x, y in batches:
        optimizer.zero_grad()
        loss = torch.nn.functional.mse_loss(model(x), y)
        loss.backward()
        optimizer.step()
        total = total + loss.detach()
    return float(total) / len(batches)
