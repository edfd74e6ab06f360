"""Buggy: uses the one-sided forward difference (f(x + eps e_i) - f(x)) / eps instead of the central difference."""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np


def numerical_gradient(f: Callable[[np.ndarray], float], x: np.ndarray,
                       eps: float = 1e-6) -> np.ndarray:
    """Finite-difference estimate of the gradient of f at x, perturbing x in place."""
    if not isinstance(eps, (int, float)) or not math.isfinite(eps) or eps <= 0:
        raise ValueError(f"eps must be positive and finite, got {eps!r}")
    if not isinstance(x, np.ndarray) or x.dtype.kind != "f":
        raise ValueError(f"x must be a float array, got {getattr(x, 'dtype', type(x))}")
    grad = np.zeros_like(x)
    base = f(x)
    it = np.nditer(x, flags=["multi_index"])
    for _ in it:
        idx = it.multi_index
        orig = x[idx]
        x[idx] = orig + eps
        bumped = f(x)
        x[idx] = orig
        grad[idx] = (bumped - base) / eps
    return grad
