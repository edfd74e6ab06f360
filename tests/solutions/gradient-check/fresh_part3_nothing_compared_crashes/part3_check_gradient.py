import math
import warnings
import numpy as np
from exercises.part1_numerical_gradient import numerical_gradient
from exercises.part2_relative_error import relative_error

H = 1e-6


def _f_at(f, x, idx, delta):
    keep = x[idx]
    x[idx] = keep + delta
    val = f(x)
    x[idx] = keep
    return val


def check_gradient(f, grad_f, x, tol=1e-6):
    if not isinstance(tol, (int, float)) or not math.isfinite(tol) or tol <= 0:
        raise ValueError("tol must be positive")
    if x.dtype != np.float64:
        warnings.warn("x is not float64: use float64 for gradient checks", UserWarning)
    ana = np.asarray(grad_f(x))
    if ana.shape != x.shape:
        raise ValueError("grad_f(x) has the wrong shape")
    num = numerical_gradient(f, x, H)
    fx = f(x)
    worst_idx, worst_err = None, -1.0
    kinks = []
    for idx in np.ndindex(*x.shape):
        e = relative_error(ana[idx], num[idx])
        if not e <= tol:
            right = (_f_at(f, x, idx, H) - fx) / H
            left = (fx - _f_at(f, x, idx, -H)) / H
            if relative_error(np.asarray(right), np.asarray(left)) > 1e-3:
                lo, hi = min(left, right), max(left, right)
                s = tol * max(abs(left), abs(right))
                if lo - s <= ana[idx] <= hi + s:
                    kinks.append(idx)
                    continue
        if math.isnan(e) or e > worst_err:
            worst_idx, worst_err = idx, e
            if math.isnan(e):
                break
    if kinks:
        warnings.warn(f"f has a kink (not differentiable) at {kinks[0]}", UserWarning)
    return bool(worst_err <= tol), tuple(int(i) for i in worst_idx), float(worst_err)
