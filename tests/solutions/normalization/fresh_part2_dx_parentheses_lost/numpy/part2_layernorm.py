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
    """(dx, dgamma, dbeta): the mean and the variance depend on x, hence dx's two extra
    terms; dgamma and dbeta sum over every axis but the last."""
    xhat, std, gamma = cache["xhat"], cache["std"], cache["gamma"]
    if dy.shape != xhat.shape:
        raise ValueError(f"dy must be {xhat.shape}, got {dy.shape}")
    batch_axes = tuple(range(dy.ndim - 1))
    dbeta = dy.sum(axis=batch_axes)
    dgamma = (dy * xhat).sum(axis=batch_axes)
    dxhat = dy * gamma
    mean_dxhat = dxhat.mean(axis=-1, keepdims=True)
    projection = (dxhat * xhat).mean(axis=-1, keepdims=True)
    dx = dxhat - mean_dxhat - xhat * projection / std
    return dx, dgamma, dbeta
