"""Part 1: the forward pass of a two-layer MLP, with a cache for the backward (numpy flavor).

    X (B, D_in) -> z = X @ W1 + b1 (B, H) -> h = relu(z) -> logits = h @ W2 + b2 (B, C)

params is a dict with keys W1 (D_in, H), b1 (H,), W2 (H, C), b2 (C,).

Run `grader check part1` to grade this file; `grader hint part1` when stuck.
"""

from __future__ import annotations

from typing import Any

import numpy as np


def mlp_forward(params: dict[str, np.ndarray], X: np.ndarray) -> tuple[np.ndarray, Any]:
    """Return (logits, cache): logits of shape (B, C) and whatever your mlp_backward needs.

    The cache's format is yours: Part 3's grader hands your mlp_backward exactly the cache
    this function returned. It must own its memory: nothing in it may share memory with X or
    params' arrays (keep X.copy(), not X), because a caller may refill X in place (the next
    micro-batch) before it calls the backward.
    Raises ValueError when X is not 2-D or the parameters' shapes do not fit X and each other.
    Must not modify X or params' arrays.
    """
    raise NotImplementedError("Part 1: write mlp_forward")
