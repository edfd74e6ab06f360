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


def _kink(f, x, i, f_x, analytic):
    fwd = (_shifted(f, x, i, EPS) - f_x) / EPS
    bwd = (f_x - _shifted(f, x, i, -EPS)) / EPS
    if abs(fwd - bwd) <= 1e-3 * max(abs(fwd), abs(bwd)):
        return False
    return min(fwd, bwd) - 1e-9 <= analytic <= max(fwd, bwd) + 1e-9


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
    errors = {i: relative_error(a[i], n[i]) for i in indices}
    suspects = [i for i, e in errors.items() if not e <= tol]
    if suspects:
        f_x = float(f(x))
        kinks = [i for i in suspects if _kink(f, x, i, f_x, float(a[i]))]
        if kinks:
            warnings.warn(f"kink at {kinks}", UserWarning)
        for i in kinks:
            del errors[i]

    if not errors:
        return True, None, 0.0
    worst = max(errors, key=errors.get)
    mean = sum(errors.values()) / len(errors)
    return bool(mean <= tol), tuple(int(k) for k in worst), float(errors[worst])
