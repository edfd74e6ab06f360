"""Buggy: the ReLU is written np.max(z, 0), which reduces over the batch axis, instead of the elementwise np.maximum(z, 0)."""

from __future__ import annotations

from typing import Any

import numpy as np

PARAM_NAMES = ("W1", "b1", "W2", "b2")


def check_params(params: dict[str, np.ndarray], d_in: int) -> tuple[int, int]:
    """Validate the parameter shapes for d_in input features; return (H, C)."""
    for key in PARAM_NAMES:
        if key not in params:
            raise ValueError(f"params is missing {key}")
    W1, b1, W2, b2 = params["W1"], params["b1"], params["W2"], params["b2"]
    if W1.ndim != 2 or W1.shape[0] != d_in:
        raise ValueError(f"W1 should be ({d_in}, H), got {W1.shape}")
    H = W1.shape[1]
    if b1.shape != (H,):
        raise ValueError(f"b1 should be ({H},), got {b1.shape}")
    if W2.ndim != 2 or W2.shape[0] != H:
        raise ValueError(f"W2 should be ({H}, C), got {W2.shape}")
    C = W2.shape[1]
    if b2.shape != (C,):
        raise ValueError(f"b2 should be ({C},), got {b2.shape}")
    return H, C


def mlp_forward(params: dict[str, np.ndarray],
                X: np.ndarray) -> tuple[np.ndarray, dict[str, Any]]:
    """Two-layer MLP forward: logits and a cache for the backward pass."""
    if X.ndim != 2:
        raise ValueError(f"X should be (B, D_in), got {X.shape}")
    check_params(params, X.shape[1])
    pre = X.dot(params["W1"]) + params["b1"]
    act = np.max(pre, 0)
    out = act.dot(params["W2"]) + params["b2"]
    cache = {"X": np.array(X, copy=True), "z": pre, "h": act}
    return out, cache
