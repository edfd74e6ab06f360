"""Part 3, numpy reference: BatchNorm over the batch, training and evaluation modes, the
running statistics as torch keeps them, and the backward by hand."""

from __future__ import annotations

from typing import Any

import numpy as np


def check_batchnorm(x: np.ndarray, gamma: np.ndarray, beta: np.ndarray,
                    running_mean: np.ndarray, running_var: np.ndarray, momentum: float,
                    eps: float, training: bool) -> None:
    if x.ndim != 2:
        raise ValueError(f"x must be (N, D), got shape {x.shape}")
    features = x.shape[1]
    for name, a in (("gamma", gamma), ("beta", beta), ("running_mean", running_mean),
                    ("running_var", running_var)):
        if a.shape != (features,):
            raise ValueError(f"{name} must be ({features},), got {a.shape}")
    if not 0 < momentum < 1:
        raise ValueError(f"momentum must lie in [0, 1], got {momentum}")
    if eps < 0:
        raise ValueError(f"eps must be >= 0, got {eps}")
    if training and x.shape[0] < 2:
        raise ValueError("training needs more than one example per feature")


def batchnorm_forward(x: np.ndarray, gamma: np.ndarray, beta: np.ndarray,
                      running_mean: np.ndarray, running_var: np.ndarray,
                      momentum: float = 0.1, eps: float = 1e-5, training: bool = True
                      ) -> tuple[np.ndarray, dict[str, Any], np.ndarray, np.ndarray]:
    """(y, cache, new running_mean, new running_var), as torch's batch_norm."""
    check_batchnorm(x, gamma, beta, running_mean, running_var, momentum, eps, training)
    if training:
        n = x.shape[0]
        mean = x.mean(axis=0)
        centered = x - mean
        var = (centered ** 2).mean(axis=0)
        unbiased = var * (n / (n - 1))
        new_mean = (1 - momentum) * running_mean + momentum * mean
        new_var = (1 - momentum) * running_var + momentum * unbiased
    else:
        centered = x - running_mean
        var = running_var
        new_mean = running_mean.copy()
        new_var = running_var.copy()
    std = np.sqrt(var + eps)
    xhat = centered / std
    y = xhat * gamma + beta
    cache = {"xhat": xhat, "std": std, "gamma": gamma.copy(), "training": training}
    return y, cache, new_mean, new_var


def batchnorm_backward(dy: np.ndarray, cache: dict[str, Any]
                       ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(dx, dgamma, dbeta). In training the batch's mean and variance depend on x (dx's two
    extra terms); in evaluation the running statistics are constants."""
    xhat, std, gamma = cache["xhat"], cache["std"], cache["gamma"]
    if dy.shape != xhat.shape:
        raise ValueError(f"dy must be {xhat.shape}, got {dy.shape}")
    dbeta = dy.sum(axis=0)
    dgamma = (dy * xhat).sum(axis=0)
    dxhat = dy * gamma
    if not cache["training"]:
        return dxhat / std, dgamma, dbeta
    mean_dxhat = dxhat.mean(axis=0)
    projection = (dxhat * xhat).mean(axis=0)
    dx = (dxhat - mean_dxhat - xhat * projection) / std
    return dx, dgamma, dbeta
