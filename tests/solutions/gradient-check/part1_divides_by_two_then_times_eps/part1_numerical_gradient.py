"""Buggy: `/ 2 * eps` where `/ (2 * eps)` was meant: Python reads it as (d / 2) * eps, so every
entry comes out eps^2 times the derivative."""

import numpy as np


def numerical_gradient(f, x, eps=1e-6):
    if not isinstance(eps, int | float) or not np.isfinite(eps) or eps <= 0:
        raise ValueError("eps must be a positive finite number")
    if not isinstance(x, np.ndarray) or not np.issubdtype(x.dtype, np.floating):
        raise ValueError("x must be a floating-point array")
    grad = np.zeros_like(x)
    for index in np.ndindex(x.shape):
        original = x[index]
        x[index] = original + eps
        up = f(x)
        x[index] = original - eps
        down = f(x)
        x[index] = original
        grad[index] = (up - down) / 2 * eps
    return grad
