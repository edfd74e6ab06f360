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
    key = (x.shape, x.dtype)
    _BUFFERS = numerical_gradient.__dict__.setdefault("buffers", {})
    if key not in _BUFFERS:  # reuse the result buffer between calls
        _BUFFERS[key] = np.empty_like(x)
    g = _BUFFERS[key]
    for index in np.ndindex(*x.shape):
        saved = x[index]
        x[index] = saved + eps
        plus = f(x)
        x[index] = saved - eps
        minus = f(x)
        x[index] = saved
        g[index] = (plus - minus) / (2 * eps)
    return g
