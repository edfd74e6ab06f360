"""Buggy: dW2 is computed from the pre-activation z instead of the ReLU output h."""

from __future__ import annotations

from typing import Any

import torch


def mlp_backward(params: dict[str, torch.Tensor], cache: dict[str, Any],
                 dlogits: torch.Tensor) -> dict[str, torch.Tensor]:
    """Hand-written gradients of the two-layer MLP given dL/dlogits."""
    X, z = cache["X"], cache["z"]
    W2 = params["W2"]
    want = (X.shape[0], W2.shape[1])
    if tuple(dlogits.shape) != want:
        raise ValueError(f"dlogits should be {want}, got {tuple(dlogits.shape)}")
    dW2 = z.t() @ dlogits
    db2 = dlogits.sum(0)
    mask = (z > 0).to(dlogits.dtype)
    dz = (dlogits @ W2.t()) * mask
    dW1 = X.t() @ dz
    db1 = dz.sum(0)
    return {"dW1": dW1, "db1": db1, "dW2": dW2, "db2": db2}
