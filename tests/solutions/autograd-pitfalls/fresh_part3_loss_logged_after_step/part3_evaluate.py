"""Part 3, fixed (torch): evaluation under torch.no_grad(), totals of loss.item()."""

from __future__ import annotations

import torch

# In a few sentences: what was wrong, what symptom it causes, and what the fix is.
EXPLANATION = (
    "Outside torch.no_grad() every forward of evaluate records a graph and saves its "
    "activations for a backward that never comes. And `total += loss` adds the loss tensor, "
    "not its value: the total keeps a reference to every batch's loss, so every step's graph "
    "stays alive until the total dies, and the memory held grows with the number of batches "
    "(the result is a tensor with a grad_fn, not a float). The fix: evaluate under "
    "torch.no_grad() (or torch.inference_mode()), and accumulate loss.item(), a Python float, "
    "in both functions. model.eval() alone is not the fix: it switches dropout and batch "
    "norm to inference behaviour but autograd still records."
)


def evaluate(model: torch.nn.Module, batches: list[tuple[torch.Tensor, torch.Tensor]]) -> float:
    """The mean over `batches` of the mean squared error of model(x) against y, as a float.

    Evaluation only: autograd records nothing, and the model (its parameters, their .grad, its
    training mode) is left as it was. Raises ValueError when batches is empty.
    """
    if not batches:
        raise ValueError("evaluate needs at least one batch")
    total = 0.0
    with torch.no_grad():
        for x, y in batches:
            total += torch.nn.functional.mse_loss(model(x), y).item()
    return total / len(batches)


def running_loss(model: torch.nn.Module, batches: list[tuple[torch.Tensor, torch.Tensor]],
                 lr: float) -> float:
    """One epoch of plain SGD (torch.optim.SGD, no momentum) on the mean squared error, one step
    per batch in order; return the mean of the step losses as a float.

    Memory stays flat however many batches there are: nothing of a step's graph outlives the
    step. Raises ValueError when batches is empty or lr <= 0.
    """
    if not batches:
        raise ValueError("running_loss needs at least one batch")
    if not lr > 0:
        raise ValueError(f"running_loss needs lr > 0, got {lr}")
    optimizer = torch.optim.SGD(model.parameters(), lr=lr)
    total = 0.0
    for x, y in batches:
        optimizer.zero_grad()
        loss = torch.nn.functional.mse_loss(model(x), y)
        loss.backward()
        optimizer.step()
        with torch.no_grad():
            total += torch.nn.functional.mse_loss(model(x), y).item()
    return total / len(batches)
