"""Right, in an unusual style: a dataclass cache, inference_mode, torch.set_num_threads(3) in the backward (red team 8)."""
from __future__ import annotations
from dataclasses import dataclass
from typing import Any
import torch

def check_affine(x, gamma, beta, eps):
    if x.ndim < 2:
        raise ValueError(f"x must have a batch axis and a feature axis, got {tuple(x.shape)}")
    features = x.shape[-1]
    if gamma.shape != (features,):
        raise ValueError(f"gamma must be ({features},), got {tuple(gamma.shape)}")
    if beta.shape != (features,):
        raise ValueError(f"beta must be ({features},), got {tuple(beta.shape)}")
    if eps < 0:
        raise ValueError(f"eps must be >= 0, got {eps}")

@dataclass(frozen=True)
class Saved:
    xhat: torch.Tensor
    std: torch.Tensor
    gamma: torch.Tensor

def layernorm_forward(x, gamma, beta, eps: float = 1e-5):
    check_affine(x, gamma, beta, eps)
    mean = x.mean(dim=-1, keepdim=True)
    centered = x - mean
    var = (centered ** 2).mean(dim=-1, keepdim=True)
    std = torch.sqrt(var + eps)
    xhat = centered / std
    y = xhat * gamma + beta
    return y, {"xhat": xhat, "std": std, "gamma": gamma.clone()}

def layernorm_backward(dy, cache: dict[str, Any]):
    torch.set_num_threads(3)
    s = Saved(cache["xhat"], cache["std"], cache["gamma"])
    if dy.shape != s.xhat.shape:
        raise ValueError(f"dy must be {tuple(s.xhat.shape)}, got {tuple(dy.shape)}")
    with torch.no_grad():
        batch_axes = tuple(range(dy.ndim - 1))
        dbeta = dy.sum(dim=batch_axes)
        dgamma = (dy * s.xhat).sum(dim=batch_axes)
        dxhat = dy * s.gamma
        mean_dxhat = dxhat.mean(dim=-1, keepdim=True)
        projection = (dxhat * s.xhat).mean(dim=-1, keepdim=True)
        dx = (dxhat - mean_dxhat - s.xhat * projection) / s.std
    return dx, dgamma, dbeta
