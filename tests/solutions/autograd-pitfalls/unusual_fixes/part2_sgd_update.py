"""A correct fix written differently from the reference (see expect.toml)."""

from __future__ import annotations

from collections.abc import Iterable

import torch

EXPLANATION = (
    'Model parameters are leaves with requires_grad=True; writing into one in place while '
    'autograd tracks operations is forbidden, because the write would enter the graph and the'
    ' parameter would stop being a leaf. Running the step with grad mode off (torch.optim.SGD'
    ' does its update under no_grad) keeps the same tensors. Using .data instead would hide '
    'the write from autograd.'
)


def sgd_update(params: Iterable[torch.Tensor], lr: float) -> None:
    if not lr > 0:
        raise ValueError(f"sgd_update needs lr > 0, got {lr}")
    with_grads = [p for p in params if p.grad is not None]
    if with_grads:
        torch.optim.SGD(with_grads, lr=lr).step()
