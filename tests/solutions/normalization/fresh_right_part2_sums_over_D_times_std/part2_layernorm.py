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


def layernorm_backward(dy: np.ndarray, cache: dict[str, Any]
                       ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    xhat, std, gamma = cache["xhat"], cache["std"], cache["gamma"]
    if dy.shape != xhat.shape:
        raise ValueError(f"dy must be {xhat.shape}, got {dy.shape}")
    D = xhat.shape[-1]
    flat_dy = dy.reshape(-1, D)
    flat_xhat = xhat.reshape(-1, D)
    dbeta = flat_dy.sum(axis=0)
    dgamma = np.einsum("nd,nd->d", flat_dy, flat_xhat)
    g = dy * gamma
    dx = (D * g - g.sum(axis=-1, keepdims=True)
          - xhat * (g * xhat).sum(axis=-1, keepdims=True)) / (D * std)
    return dx, dgamma, dbeta
