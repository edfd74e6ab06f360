"""A correct fix written differently from the reference (see expect.toml)."""

from __future__ import annotations

import torch

EXPLANATION = (
    'The first backward released the saved tensors it used, and the second backward had to go'
    ' through the shared trunk again and found them gone, so it raised. Keeping the graph '
    'with retain_graph on the first call only (or one backward of the sum) fixes it; '
    'retaining on every call would keep the buffers around.'
)


def two_heads_backward(model: torch.nn.Module, x: torch.Tensor) -> tuple[float, float]:
    if x.ndim != 2:
        raise ValueError(f"x should be (batch, features), got shape {tuple(x.shape)}")
    h = model.trunk(x)
    loss_a = model.head_a(h).pow(2).mean()
    loss_b = (model.head_b(h) - 1).pow(2).mean()
    loss_a.backward(retain_graph=True)
    loss_b.backward()
    return loss_a.item(), loss_b.item()
