"""Part 1 (numpy) whose logits are computed from the pre-activation z, not h = relu(z)."""

from __future__ import annotations

from typing import Any

import numpy as np

PARAM_NAMES = ("W1", "b1", "W2", "b2")


def check_params(params: dict[str, np.ndarray], d_in: int) -> tuple[int, int]:
    """(H, C) of consistent parameters for inputs of d_in features; ValueError otherwise."""
    missing = [name for name in PARAM_NAMES if name not in params]
    if missing:
        raise ValueError(f"params lacks {', '.join(missing)}")
    W1, b1, W2, b2 = (params[name] for name in PARAM_NAMES)
    if W1.ndim != 2 or W1.shape[0] != d_in:
        raise ValueError(f"W1 must be ({d_in}, H), got {W1.shape}")
    hidden = W1.shape[1]
    if b1.shape != (hidden,):
        raise ValueError(f"b1 must be ({hidden},), got {b1.shape}")
    if W2.ndim != 2 or W2.shape[0] != hidden:
        raise ValueError(f"W2 must be ({hidden}, C), got {W2.shape}")
    classes = W2.shape[1]
    if b2.shape != (classes,):
        raise ValueError(f"b2 must be ({classes},), got {b2.shape}")
    return hidden, classes


def mlp_forward(params: dict[str, np.ndarray],
                X: np.ndarray) -> tuple[np.ndarray, dict[str, Any]]:
    """logits = relu(X @ W1 + b1) @ W2 + b2, and the cache the backward needs.

    The cache owns its memory (a copy of X; z and h are new arrays), so a caller that refills
    X in place before the backward runs cannot change the gradients.
    """
    if X.ndim != 2:
        raise ValueError(f"X must be (B, D_in), got {X.shape}")
    check_params(params, X.shape[1])
    z = X @ params["W1"] + params["b1"]
    h = np.maximum(z, 0)
    logits = z @ params["W2"] + params["b2"]
    return logits, {"X": X.copy(), "z": z, "h": h}
