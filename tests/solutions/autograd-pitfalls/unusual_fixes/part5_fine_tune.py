"""A correct fix written differently from the reference (see expect.toml)."""

from __future__ import annotations

import torch

EXPLANATION = (
    "The adapter's output was detached, which cuts the graph there: gradients could not reach"
    ' the adapter, so its weights never changed and only the head learned. The encoder is '
    'already frozen with requires_grad_(False); running it under no_grad is enough, and I '
    'would verify by checking which parameters changed after one step.'
)


def freeze_encoder(model: torch.nn.Module) -> list[torch.nn.Parameter]:
    model.encoder.requires_grad_(False)
    return [p for p in model.parameters() if p.requires_grad]


def fine_tune(model: torch.nn.Module, x: torch.Tensor, y: torch.Tensor, lr: float) -> float:
    if x.shape[0] != y.shape[0]:
        raise ValueError(f"x has {x.shape[0]} rows but y has {y.shape[0]}")
    trainable = [p for p in model.parameters() if p.requires_grad]
    optimizer = torch.optim.SGD(trainable, lr=lr)
    with torch.no_grad():
        features = model.encoder(x)
    hidden = model.adapter(features)
    loss = torch.nn.functional.mse_loss(model.head(hidden), y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    return loss.item()
