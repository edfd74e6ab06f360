"""Buggy: entries are perturbed through x.reshape(-1), which is a copy for a non-contiguous x, so f never sees the perturbation and the gradient comes out 0."""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np


def numerical_gradient(f: Callable[[np.ndarray], float], x: np.ndarray,
                       eps: float = 1e-6) -> np.ndarray:
    """Central-difference estimate of the gradient of f at x, perturbing x in place."""
    if not isinstance(eps, (int, float)) or not math.isfinite(eps) or eps <= 0:
        raise ValueError(f"eps must be positive and finite, got {eps!r}")
    if not isinstance(x, np.ndarray) or not np.issubdtype(x.dtype, np.floating):
        raise ValueError(f"x must be a float array, got {getattr(x, 'dtype', type(x))}")
    flat_x = x.reshape(-1)
    flat_g = np.empty(flat_x.shape, dtype=x.dtype)
    for j in range(flat_x.size):
        keep = flat_x[j]
        flat_x[j] = keep + eps
        hi = f(x)
        flat_x[j] = keep - eps
        lo = f(x)
        flat_x[j] = keep
        flat_g[j] = (hi - lo) / (2.0 * eps)
    return flat_g.reshape(x.shape)
