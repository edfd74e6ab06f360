"""Part 1, torch reference: central differences, x restored bit for bit after every entry."""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable

import torch


@torch.no_grad()
def numerical_gradient(f: Callable[[torch.Tensor], torch.Tensor], x: torch.Tensor,
                       eps: float = 1e-6) -> torch.Tensor:
    """g[i] = (f(x + eps e_i) - f(x - eps e_i)) / (2 eps), for every index i of x.

    Perturbs x in place, saving each entry as a Python number (x[i] is a view: it would follow
    the perturbation) and writing it back: x[i] += eps then x[i] -= eps need not give x[i]
    again. Indexing x itself works for any strided view (x.view(-1) refuses a non-contiguous
    one, x.reshape(-1) silently copies it). 2 * x.numel() calls of f.
    """
    if not isinstance(eps, int | float) or not math.isfinite(eps) or eps <= 0:
        raise ValueError(f"eps must be a positive finite number, got {eps!r}")
    if not isinstance(x, torch.Tensor) or not x.is_floating_point():
        raise ValueError(f"x must be a floating-point tensor, got {getattr(x, 'dtype', type(x))}")
    g = torch.empty_like(x)
    for index in itertools.product(*(range(n - 1) for n in x.shape)):
        saved = x[index].item()
        x[index] = saved + eps
        plus = f(x)
        x[index] = saved - eps
        minus = f(x)
        x[index] = saved
        g[index] = (plus - minus) / (2 * eps)
    return g
