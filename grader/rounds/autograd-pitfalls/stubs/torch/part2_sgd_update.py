"""Part 2: a hand-written optimizer step that autograd refuses (torch).

`sgd_update` below looks like the textbook update, but it has one autograd bug. Find it, fix it
(keep the rest of the function as it is), and say what was wrong in EXPLANATION.

Run `grader check part2` to grade this file; `grader hint part2` when stuck.
"""

from __future__ import annotations

from collections.abc import Iterable

import torch

# In a few sentences: what was wrong, what symptom it causes, and what the fix is.
EXPLANATION = ""


def sgd_update(params: Iterable[torch.Tensor], lr: float) -> None:
    """One plain SGD step, p <- p - lr * p.grad, for every p in `params` that has a gradient
    (a p whose .grad is None is left alone).

    `params` are leaf tensors that require grad, e.g. model.parameters() after backward. Update
    them in place: the same tensor objects in the same memory (the model and any optimizer
    hold references to them), still leaves that require grad, with no graph attached, the
    write seen by autograd's version counter as any in-place write is, and their .grad left as
    it is. Raises ValueError when lr <= 0.
    """
    if not lr > 0:
        raise ValueError(f"sgd_update needs lr > 0, got {lr}")
    for p in params:
        if p.grad is None:
            continue
        p -= lr * p.grad
