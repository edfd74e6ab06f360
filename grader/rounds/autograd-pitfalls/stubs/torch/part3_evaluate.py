"""Part 3: evaluation and a running loss that hold on to memory (torch).

`evaluate` and `running_loss` below give sensible numbers, but they share one autograd bug: what
they keep alive. Find it, fix both (keep the rest of each function as it is), and say what was
wrong in EXPLANATION.

Run `grader check part3` to grade this file; `grader hint part3` when stuck.
"""

from __future__ import annotations

import torch

# In a few sentences: what was wrong, what symptom it causes, and what the fix is.
EXPLANATION = ""


def evaluate(model: torch.nn.Module, batches: list[tuple[torch.Tensor, torch.Tensor]]) -> float:
    """The mean over `batches` of the mean squared error of model(x) against y, as a float.

    Evaluation only: autograd records nothing, and the model (its parameters, their .grad, its
    training mode) is left as it was. Raises ValueError when batches is empty.
    """
    if not batches:
        raise ValueError("evaluate needs at least one batch")
    total = 0.0
    for x, y in batches:
        total += torch.nn.functional.mse_loss(model(x), y)
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
        total += loss
    return total / len(batches)
