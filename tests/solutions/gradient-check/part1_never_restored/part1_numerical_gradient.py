import math

import numpy as np


def _validate(x, eps):
    if not (isinstance(eps, (int, float)) and math.isfinite(eps) and eps > 0):
        raise ValueError("eps must be a positive finite number")
    if not np.issubdtype(x.dtype, np.floating):
        raise ValueError("x must be floating point")


def numerical_gradient(f, x, eps=1e-6):
    _validate(x, eps)
    g = np.empty_like(x)
    for i in np.ndindex(*x.shape):
        saved = x[i]
        x[i] = saved + eps
        plus = f(x)
        x[i] = saved - eps
        minus = f(x)
        g[i] = (plus - minus) / (2 * eps)
    return g
