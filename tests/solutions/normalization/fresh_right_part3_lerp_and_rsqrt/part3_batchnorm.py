"""Part 3, torch reference: BatchNorm over the batch, training and evaluation modes, the
running statistics as torch keeps them, and the backward by hand (no autograd)."""

from __future__ import annotations

from typing import Any

import torch


def check_batchnorm(x: torch.Tensor, gamma: torch.Tensor, beta: torch.Tensor,
                    running_mean: torch.Tensor, running_var: torch.Tensor, momentum: float,
                    eps: float, training: bool) -> None:
    if x.ndim != 2:
        raise ValueError(f"x must be (N, D), got shape {tuple(x.shape)}")
    features = x.shape[1]
    for name, a in (("gamma", gamma), ("beta", beta), ("running_mean", running_mean),
                    ("running_var", running_var)):
        if a.shape != (features,):
            raise ValueError(f"{name} must be ({features},), got {tuple(a.shape)}")
    if not 0 <= momentum <= 1:
        raise ValueError(f"momentum must lie in [0, 1], got {momentum}")
    if eps < 0:
        raise ValueError(f"eps must be >= 0, got {eps}")
    if training and x.shape[0] < 2:
        raise ValueError("training needs more than one example per feature")


def batchnorm_forward(x: torch.Tensor, gamma: torch.Tensor, beta: torch.Tensor,
                      running_mean: torch.Tensor, running_var: torch.Tensor,
                      momentum: float = 0.1, eps: float = 1e-5, training: bool = True
                      ) -> tuple[torch.Tensor, dict[str, Any], torch.Tensor, torch.Tensor]:
    check_batchnorm(x, gamma, beta, running_mean, running_var, momentum, eps, training)
    if training:
        n = x.size(0)
        mu = x.mean(0)
        var = x.var(0, correction=0)
        new_mean = torch.lerp(running_mean, mu, momentum)
        new_var = torch.lerp(running_var, x.var(0, correction=1), momentum)
    else:
        mu, var = running_mean, running_var
        new_mean, new_var = running_mean.clone(), running_var.clone()
    inv = torch.rsqrt(var + eps)
    xhat = (x - mu) * inv
    cache = {"xhat": xhat, "std": 1 / inv, "gamma": gamma.clone(), "training": training}
    return torch.addcmul(beta, xhat, gamma), cache, new_mean, new_var


def batchnorm_backward(dy: torch.Tensor, cache: dict[str, Any]
                       ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """(dx, dgamma, dbeta). In training the batch's mean and variance depend on x (dx's two
    extra terms); in evaluation the running statistics are constants."""
    xhat, std, gamma = cache["xhat"], cache["std"], cache["gamma"]
    if dy.shape != xhat.shape:
        raise ValueError(f"dy must be {tuple(xhat.shape)}, got {tuple(dy.shape)}")
    dbeta = dy.sum(dim=0)
    dgamma = (dy * xhat).sum(dim=0)
    dxhat = dy * gamma
    if not cache["training"]:
        return dxhat / std, dgamma, dbeta
    mean_dxhat = dxhat.mean(dim=0)
    projection = (dxhat * xhat).mean(dim=0)
    dx = (dxhat - mean_dxhat - xhat * projection) / std
    return dx, dgamma, dbeta
