import itertools
import math
import warnings

import torch

from .part1_numerical_gradient import numerical_gradient
from .part2_relative_error import relative_error

EPS = 1e-6


def _shifted(f, x, i, step):
    saved = x[i].item()
    x[i] = saved + step
    value = float(f(x))
    x[i] = saved
    return value


def check_gradient(f, grad_f, x, tol=1e-6):
    if not (isinstance(tol, (int, float)) and math.isfinite(tol) and tol > 0):
        raise ValueError("tol must be positive")
    if x.dtype != torch.float64:
        warnings.warn("use float64 for gradient checks", UserWarning)
    a = grad_f(x)
    if a.shape != x.shape:
        raise ValueError("grad_f(x) has the wrong shape")
    n = numerical_gradient(f, x, EPS)
    indices = list(itertools.product(*map(range, x.shape)))
    errors = {i: float((a[i] - n[i]).abs() / torch.maximum(a[i].abs(), n[i].abs())) for i in indices}

    if not errors:
        return True, None, 0.0
    worst = max(errors, key=lambda i: math.inf if math.isnan(errors[i]) else errors[i])
    return bool(errors[worst] <= tol), tuple(int(k) for k in worst), float(errors[worst])
