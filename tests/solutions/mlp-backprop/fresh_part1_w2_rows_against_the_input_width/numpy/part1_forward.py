"""Part 1: the MLP forward, with every parameter's shape checked first."""

from __future__ import annotations

import numpy as np


def check_params(params, d_in):
    W1, b1, W2, b2 = (params[k] for k in ("W1", "b1", "W2", "b2"))
    if W1.ndim != 2 or W1.shape[0] != d_in:
        raise ValueError("W1 must be (D, H)")
    if W2.ndim != 2 or W2.shape[0] != d_in:
        raise ValueError("W2 must be (H, C)")
    if b1.shape != (W1.shape[1],) or b2.shape != (W2.shape[1],):
        raise ValueError("b1 must be (H,) and b2 (C,)")
    return W1.shape[1], W2.shape[1]


def mlp_forward(params, X):
    if X.ndim != 2:
        raise ValueError("X must be (B, D)")
    check_params(params, X.shape[1])
    z = X @ params["W1"] + params["b1"]
    h = np.maximum(z, 0.0)
    return h @ params["W2"] + params["b2"], {"X": X.copy(), "z": z, "h": h}
