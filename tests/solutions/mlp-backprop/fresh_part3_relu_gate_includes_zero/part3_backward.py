"""Buggy: the ReLU gate is z >= 0, so gradient flows through units with z exactly 0 (relu'(0) taken as 1, not 0)."""

from __future__ import annotations

from typing import Any

import numpy as np


def mlp_backward(params: dict[str, np.ndarray], cache: dict[str, Any],
                 dlogits: np.ndarray) -> dict[str, np.ndarray]:
    """Hand-written gradients of the two-layer MLP given dL/dlogits."""
    X, z, h = cache["X"], cache["z"], cache["h"]
    W2 = params["W2"]
    if dlogits.shape != (X.shape[0], W2.shape[1]):
        raise ValueError(f"dlogits should be {(X.shape[0], W2.shape[1])}, got {dlogits.shape}")
    grads = {}
    grads["dW2"] = np.dot(h.T, dlogits)
    grads["db2"] = np.sum(dlogits, axis=0)
    dz = np.dot(dlogits, W2.T)
    dz[z < 0] = 0.0
    grads["dW1"] = np.dot(X.T, dz)
    grads["db1"] = np.sum(dz, axis=0)
    return grads
