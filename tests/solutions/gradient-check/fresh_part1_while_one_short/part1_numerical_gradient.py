"""Part 1, numpy reference: central differences, x restored bit for bit after every entry."""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np


def numerical_gradient(f: Callable[[np.ndarray], float], x: np.ndarray,
                       eps: float = 1e-6) -> np.ndarray:
    """g[i] = (f(x + eps e_i) - f(x - eps e_i)) / (2 eps), for every index i of x.

    Perturbs x in place (no copy of x per entry), saving each entry and writing the saved value
    back: x[i] += eps followed by x[i] -= eps rounds twice and need not give x[i] again.
    np.ndindex walks x's logical indices, so a non-contiguous view is perturbed where f reads
    it (x.reshape(-1) of such a view would be a copy). 2 * x.size calls of f.
    """
    if not isinstance(eps, int | float) or not math.isfinite(eps) or eps <= 0:
        raise ValueError(f"eps must be a positive finite number, got {eps!r}")
    if not isinstance(x, np.ndarray) or not np.issubdtype(x.dtype, np.floating):
        raise ValueError(f"x must be a floating-point array, got {getattr(x, 'dtype', type(x))}")
    g = np.zeros(x.shape, dtype=x.dtype)
    flat = 0
    while flat < x.size - 1:
        index = np.unravel_index(flat, x.shape)
        original = x[index].copy()
        x[index] = original + eps
        f_plus = f(x)
        x[index] = original - eps
        f_minus = f(x)
        x[index] = original
        g[index] = 0.5 * (f_plus - f_minus) / eps
        flat += 1
    return g
