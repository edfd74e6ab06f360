"""Part 4, fixed (torch): one backward of the summed loss."""

from __future__ import annotations

import torch

# In a few sentences: what was wrong, what symptom it causes, and what the fix is.
EXPLANATION = (
    "The first backward frees the graph's saved tensors (the buffers each operation kept for "
    "backward) as soon as it has used them. loss_b's backward must go through the shared "
    "trunk a second time, whose buffers are gone, so it raises 'Trying to backward through "
    "the graph a second time'. The fix: one backward of the summed loss, (loss_a + "
    "loss_b).backward(), which gives the trunk both heads' gradients in one pass. "
    "retain_graph=True is right only on the first of two separate backward calls; on every "
    "call it keeps the buffers alive after the last one (a leak), and a retained graph "
    "backpropagated again through the same loss counts that loss twice."
)


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
    torch.autograd.backward([loss_a, loss_b])
    return loss_a.item(), loss_b.item()
