"""Part 5 (torch) whose freeze_encoder calls model.encoder.eval() where requires_grad_(False) is meant."""

from __future__ import annotations

import torch

# In a few sentences: what was wrong, what symptom it causes, and what the fix is.
EXPLANATION = (
    "detach() returns a tensor cut off from the graph, so no gradient flows back through it to "
    "anything before it. It was placed after the adapter, so the adapter's parameters got no "
    "gradient and never changed: only the head trained. The encoder is frozen by "
    "requires_grad_(False) on its own parameters (freeze_encoder), so the detach belongs "
    "on the encoder's output, or nowhere. The way to catch it: check which parameters "
    "actually changed, or received a .grad, after one step."
)


def freeze_encoder(model: torch.nn.Module) -> list[torch.nn.Parameter]:
    """Freeze model.encoder, so that no later training step changes it: its parameters stop
    requiring grad; model.adapter and model.head keep training. Returns the parameters that
    still train, in model.parameters() order."""
    model.encoder.eval()
    return [p for p in model.parameters() if p.requires_grad]


def fine_tune(model: torch.nn.Module, x: torch.Tensor, y: torch.Tensor, lr: float) -> float:
    """One step of plain SGD (torch.optim.SGD, no momentum) on the mean squared error of
    model.head(model.adapter(model.encoder(x))) against y, on a model that freeze_encoder has
    frozen: the adapter and the head train, the encoder stays as it is. Returns the loss as a
    float. Raises ValueError when x and y hold different numbers of rows."""
    if x.shape[0] != y.shape[0]:
        raise ValueError(f"x has {x.shape[0]} rows but y has {y.shape[0]}")
    trainable = [p for p in model.parameters() if p.requires_grad]
    optimizer = torch.optim.SGD(trainable, lr=lr)
    features = model.encoder(x).detach()  # keep the frozen encoder out of the gradient
    hidden = model.adapter(features)
    loss = torch.nn.functional.mse_loss(model.head(hidden), y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    return loss.item()
