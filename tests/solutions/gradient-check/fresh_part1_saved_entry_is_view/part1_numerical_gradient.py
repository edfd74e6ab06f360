"""Buggy: the original entry is saved as x[i] (a 0-d view that follows later writes) rather than a Python number, so the minus step and the restore use the perturbed value."""

from __future__ import annotations

import math
from collections.abc import Callable

import torch


@torch.no_grad()
def numerical_gradient(f: Callable[[torch.Tensor], torch.Tensor], x: torch.Tensor,
                       eps: float = 1e-6) -> torch.Tensor:
    """Central-difference estimate of the gradient of f at x, perturbing x in place."""
    if not isinstance(eps, (int, float)) or not math.isfinite(eps) or eps <= 0:
        raise ValueError(f"eps must be positive and finite, got {eps!r}")
    if not isinstance(x, torch.Tensor) or not x.is_floating_point():
        raise ValueError(f"x must be a floating-point tensor, got {getattr(x, 'dtype', type(x))}")
    out = torch.zeros_like(x)
    for flat in range(x.numel()):
        idx = tuple(int(i) for i in torch.unravel_index(torch.tensor(flat), x.shape))
        original = x[idx]
        x[idx] = original + eps
        up = float(f(x))
        x[idx] = original - eps
        down = float(f(x))
        x[idx] = original
        out[idx] = (up - down) / (2 * eps)
    return out
