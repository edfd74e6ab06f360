"""Buggy: the output bias b2 is never added to the logits."""

from __future__ import annotations

from typing import Any

import torch

PARAM_NAMES = ("W1", "b1", "W2", "b2")


def check_params(params: dict[str, torch.Tensor], d_in: int) -> tuple[int, int]:
    """Validate the parameter shapes for d_in input features; return (H, C)."""
    absent = [k for k in PARAM_NAMES if k not in params]
    if absent:
        raise ValueError(f"params is missing {', '.join(absent)}")
    W1, b1, W2, b2 = (params[k] for k in PARAM_NAMES)
    if W1.dim() != 2 or W1.shape[0] != d_in:
        raise ValueError(f"W1 should be ({d_in}, H), got {tuple(W1.shape)}")
    H = W1.shape[1]
    if tuple(b1.shape) != (H,):
        raise ValueError(f"b1 should be ({H},), got {tuple(b1.shape)}")
    if W2.dim() != 2 or W2.shape[0] != H:
        raise ValueError(f"W2 should be ({H}, C), got {tuple(W2.shape)}")
    C = W2.shape[1]
    if tuple(b2.shape) != (C,):
        raise ValueError(f"b2 should be ({C},), got {tuple(b2.shape)}")
    return H, C


def mlp_forward(params: dict[str, torch.Tensor],
                X: torch.Tensor) -> tuple[torch.Tensor, dict[str, Any]]:
    """Two-layer MLP forward: logits and a cache for the backward pass."""
    if X.dim() != 2:
        raise ValueError(f"X should be (B, D_in), got {tuple(X.shape)}")
    check_params(params, X.shape[1])
    z = torch.addmm(params["b1"], X, params["W1"])
    h = z.clamp(min=0)
    logits = h @ params["W2"]
    return logits, {"X": X.detach().clone(), "z": z, "h": h}
