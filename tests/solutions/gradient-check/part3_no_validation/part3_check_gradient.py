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
    if x.dtype != np.float64:
        warnings.warn("use float64", UserWarning)
    a = np.asarray(grad_f(x))
    n = numerical_gradient(f, x, EPS)
    errors = np.abs(a - n) / np.maximum(np.maximum(np.abs(a), np.abs(n)), np.finfo(n.dtype).tiny)
    if errors.size == 0:
        return True, None, 0.0
    k = int(np.argmax(errors))
    worst = tuple(int(i) for i in np.unravel_index(k, errors.shape))
    return bool(errors.flat[k] <= tol), worst, float(errors.flat[k])
