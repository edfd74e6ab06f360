"""Known-buggy solution: Part 1 has no ReLU; Part 3 is right but graded on Part 1's cache."""

from __future__ import annotations

from typing import Any

import torch

PARAM_NAMES = ("W1", "b1", "W2", "b2")


def check_params(params: dict[str, torch.Tensor], d_in: int) -> tuple[int, int]:
    """(H, C) of consistent parameters for inputs of d_in features; ValueError otherwise."""
    missing = [name for name in PARAM_NAMES if name not in params]
    if missing:
        raise ValueError(f"params lacks {', '.join(missing)}")
    W1, b1, W2, b2 = (params[name] for name in PARAM_NAMES)
    if W1.ndim != 2 or W1.shape[0] != d_in:
        raise ValueError(f"W1 must be ({d_in}, H), got {tuple(W1.shape)}")
    hidden = W1.shape[1]
    if b1.shape != (hidden,):
        raise ValueError(f"b1 must be ({hidden},), got {tuple(b1.shape)}")
    if W2.ndim != 2 or W2.shape[0] != hidden:
        raise ValueError(f"W2 must be ({hidden}, C), got {tuple(W2.shape)}")
    classes = W2.shape[1]
    if b2.shape != (classes,):
        raise ValueError(f"b2 must be ({classes},), got {tuple(b2.shape)}")
    return hidden, classes


def mlp_forward(params: dict[str, torch.Tensor],
                X: torch.Tensor) -> tuple[torch.Tensor, dict[str, Any]]:
    """logits = relu(X @ W1 + b1) @ W2 + b2, and the cache the backward needs.

    The cache owns its memory (a clone of X; z and h are new tensors), so a caller that
    refills X in place before the backward runs cannot change the gradients.
    """
    if X.ndim != 2:
        raise ValueError(f"X must be (B, D_in), got {tuple(X.shape)}")
    check_params(params, X.shape[1])
    z = X @ params["W1"] + params["b1"]
    h = z
    logits = h @ params["W2"] + params["b2"]
    return logits, {"X": X.clone(), "z": z, "h": h}
