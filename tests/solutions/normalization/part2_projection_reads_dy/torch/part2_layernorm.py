"""Part 2, torch reference: LayerNorm over the last axis, forward and backward by hand (no
autograd)."""

from __future__ import annotations

from typing import Any

import torch


def check_affine(x: torch.Tensor, gamma: torch.Tensor, beta: torch.Tensor, eps: float) -> None:
    if x.ndim < 2:
        raise ValueError(f"x must have a batch axis and a feature axis, got {tuple(x.shape)}")
    features = x.shape[-1]
    if gamma.shape != (features,):
        raise ValueError(f"gamma must be ({features},), got {tuple(gamma.shape)}")
    if beta.shape != (features,):
        raise ValueError(f"beta must be ({features},), got {tuple(beta.shape)}")
    if eps < 0:
        raise ValueError(f"eps must be >= 0, got {eps}")


def layernorm_forward(x: torch.Tensor, gamma: torch.Tensor, beta: torch.Tensor,
                      eps: float = 1e-5) -> tuple[torch.Tensor, dict[str, Any]]:
    """y = gamma * (x - mean) / sqrt(var + eps) + beta, each row of the last axis normalised
    with its own mean and biased variance."""
    check_affine(x, gamma, beta, eps)
    mean = x.mean(dim=-1, keepdim=True)
    centered = x - mean
    var = (centered ** 2).mean(dim=-1, keepdim=True)
    std = torch.sqrt(var + eps)
    xhat = centered / std
    y = xhat * gamma + beta
    return y, {"xhat": xhat, "std": std, "gamma": gamma.clone()}


def layernorm_backward(dy: torch.Tensor, cache: dict[str, Any]
                       ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """(dx, dgamma, dbeta): the mean and the variance depend on x, hence dx's two extra
    terms; dgamma and dbeta sum over every axis but the last."""
    xhat, std, gamma = cache["xhat"], cache["std"], cache["gamma"]
    if dy.shape != xhat.shape:
        raise ValueError(f"dy must be {tuple(xhat.shape)}, got {tuple(dy.shape)}")
    batch_axes = tuple(range(dy.ndim - 1))
    dbeta = dy.sum(dim=batch_axes)
    dgamma = (dy * xhat).sum(dim=batch_axes)
    dxhat = dy * gamma
    mean_dxhat = dxhat.mean(dim=-1, keepdim=True)
    projection = (dy * xhat).mean(dim=-1, keepdim=True)
    dx = (dxhat - mean_dxhat - xhat * projection) / std
    return dx, dgamma, dbeta
