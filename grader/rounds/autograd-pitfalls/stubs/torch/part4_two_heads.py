"""Part 4: two heads on one trunk (torch).

`two_heads_backward` below backpropagates two losses through a shared trunk, and has one
autograd bug. Find it, fix it (keep the rest of the function as it is), and say what was wrong
in EXPLANATION.

Run `grader check part4` to grade this file; `grader hint part4` when stuck.
"""

from __future__ import annotations

import torch

# In a few sentences: what was wrong, what symptom it causes, and what the fix is.
EXPLANATION = ""


def two_heads_backward(model: torch.nn.Module, x: torch.Tensor) -> tuple[float, float]:
    """Backpropagate both heads' losses through the shared trunk.

    With h = model.trunk(x), loss_a = mean(model.head_a(h) ** 2) and
    loss_b = mean((model.head_b(h) - 1) ** 2): afterwards every parameter's .grad holds the
    gradient of loss_a + loss_b, added to what .grad held before (as backward() adds), each
    loss counted once, and nothing of the graph is kept once the function returns. Returns
    (loss_a, loss_b) as floats. Raises ValueError when x is not a 2-D (batch, features) tensor.
    """
    if x.ndim != 2:
        raise ValueError(f"x should be (batch, features), got shape {tuple(x.shape)}")
    h = model.trunk(x)
    loss_a = model.head_a(h).pow(2).mean()
    loss_b = (model.head_b(h) - 1).pow(2).mean()
    loss_a.backward()
    loss_b.backward()
    return loss_a.item(), loss_b.item()
