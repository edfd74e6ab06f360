"""Part 3, torch reference: the backward pass of the two-layer MLP, by hand (no autograd)."""

from __future__ import annotations

from typing import Any

import torch


def mlp_backward(params: dict[str, torch.Tensor], cache: dict[str, Any],
                 dlogits: torch.Tensor) -> dict[str, torch.Tensor]:
    """The gradients of the loss whose gradient w.r.t. the logits is dlogits.

    dlogits already carries the batch mean's 1/B, so nothing here divides by B. The ReLU gate
    is z > 0: relu'(0) = 0, the convention torch.relu's backward uses.
    """
    X, z, h = cache["X"], cache["z"], cache["h"]
    expected = (X.shape[0], params["W2"].shape[1])
    if tuple(dlogits.shape) != expected:
        raise ValueError(f"dlogits must be {expected}, got {tuple(dlogits.shape)}")
    dh = dlogits @ params["W2"].T
    dz = dh * (z > 0)
    return {"dW1": X.T @ dz, "db1": dh.sum(dim=0), "dW2": h.T @ dlogits,
            "db2": dlogits.sum(dim=0)}
