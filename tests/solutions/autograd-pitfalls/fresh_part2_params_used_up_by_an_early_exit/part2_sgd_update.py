"""Part 2: the update in place under torch.no_grad(), after an early exit over params."""

from __future__ import annotations

from collections.abc import Iterable

import torch

# In a few sentences: what was wrong, what symptom it causes, and what the fix is.
EXPLANATION = (
    "The parameters are leaf tensors that require grad, and `p -= ...` outside torch.no_grad() "
    "asks autograd to record an in-place operation on such a leaf. Autograd refuses with "
    "'a leaf Variable that requires grad is being used in an in-place operation': recording "
    "the update in the graph would turn the parameter into the output of an operation, and "
    "its .grad would no longer be the gradient at the values it holds. The fix: do the "
    "update under torch.no_grad(), still in place (p.sub_(lr * p.grad)), so the same tensors "
    "in the same memory change and nothing is recorded. Not through .data: that silences "
    "the error but hides the write from the version counter, so a graph that saved the old "
    "values would silently compute a wrong gradient instead of raising."
)


def sgd_update(params: Iterable[torch.Tensor], lr: float) -> None:
    if lr <= 0:
        raise ValueError(f"lr must be positive, got {lr}")
    if all(p.grad is None for p in params):
        return  # nothing to do
    with torch.no_grad():
        for p in params:
            if p.grad is not None:
                p.sub_(lr * p.grad)
