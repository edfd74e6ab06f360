"""Part 1: central differences, the eps guard one step too loose."""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np


def numerical_gradient(f: Callable[[np.ndarray], float], x: np.ndarray,
                       eps: float = 1e-6) -> np.ndarray:
    if not isinstance(eps, (int, float)) or not math.isfinite(eps) or eps < 0:
        raise ValueError(f"eps must be a positive finite number, got {eps!r}")
    if not isinstance(x, np.ndarray) or x.dtype.kind != "f":
        raise ValueError(f"x must be a floating-point array, got {getattr(x, 'dtype', type(x))}")
    grad = np.zeros_like(x)
    for idx in np.ndindex(*x.shape):
        orig = float(x[idx])
        x[idx] = orig + eps
        fp = f(x)
        x[idx] = orig - eps
        fm = f(x)
        x[idx] = orig
        grad[idx] = (fp - fm) / (2 * eps)
    return grad
