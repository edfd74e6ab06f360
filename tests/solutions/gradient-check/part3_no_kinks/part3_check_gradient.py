import math
import warnings

import numpy as np

from .part1_numerical_gradient import numerical_gradient
from .part2_relative_error import relative_error

EPS = 1e-6


def _shifted(f, x, i, step):
    saved = x[i]
    x[i] = saved + step
    value = f(x)
    x[i] = saved
    return value


def check_gradient(f, grad_f, x, tol=1e-6):
    if not (isinstance(tol, (int, float)) and math.isfinite(tol) and tol > 0):
        raise ValueError("tol must be positive")
    if x.dtype != np.float64:
        warnings.warn("use float64 for gradient checks", UserWarning)
    a = np.asarray(grad_f(x))
    if a.shape != x.shape:
        raise ValueError("grad_f(x) has the wrong shape")
    n = numerical_gradient(f, x, EPS)
    errors = {i: relative_error(a[i], n[i]) for i in np.ndindex(*x.shape)}

    if not errors:
        return True, None, 0.0
    worst = max(errors, key=lambda i: math.inf if math.isnan(errors[i]) else errors[i])
    return bool(errors[worst] <= tol), tuple(int(k) for k in worst), float(errors[worst])
