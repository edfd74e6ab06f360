"""Part 3: check an analytic gradient against central differences (numpy)."""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable

import numpy as np

from .part1_numerical_gradient import numerical_gradient
from .part2_relative_error import relative_error

H = 1e-6
KINK = 1e-3


def _moved(f, x, idx, step):
    keep = x[idx]
    x[idx] = keep + step
    try:
        return f(x)
    finally:
        x[idx] = keep


def check_gradient(f: Callable[[np.ndarray], float], grad_f: Callable[[np.ndarray], np.ndarray],
                   x: np.ndarray, tol: float = 1e-6) -> tuple[bool, tuple[int, ...] | None, float]:
    if not isinstance(tol, (int, float)) or not math.isfinite(tol) or tol <= 0:
        raise ValueError(f"tol must be a positive finite number, got {tol!r}")
    if x.dtype != np.float64:
        warnings.warn(f"x is {x.dtype}; gradient checks need float64", UserWarning, stacklevel=2)
    ana = np.asarray(grad_f(x))
    if ana.shape != x.shape:
        raise ValueError(f"grad_f(x) has shape {ana.shape}, x has {x.shape}")
    num = numerical_gradient(f, x, H)
    errors = {i: relative_error(ana[i], num[i]) for i in np.ndindex(x.shape)}
    over = [i for i, e in errors.items() if not e <= tol]
    if over:
        f0 = f(x)
        skipped = []
        for i in over:
            fwd = (_moved(f, x, i, H) - f0) / H
            bwd = (f0 - _moved(f, x, i, -H)) / H
            if relative_error(np.asarray(fwd), np.asarray(bwd)) <= KINK:
                continue
            slack = tol * max(abs(fwd), abs(bwd))
            if min(fwd, bwd) - slack <= float(ana[i]) <= max(fwd, bwd) + slack:
                skipped.append(i)
        if skipped:
            warnings.warn(f"kink at {len(skipped)} entries of x, first {skipped[0]}: "
                          "not compared there", UserWarning, stacklevel=2)
            for i in skipped:
                del errors[i]
    if not errors:
        return True, 0.0, None
    worst = max(errors, key=lambda i: math.inf if math.isnan(errors[i]) else errors[i])
    worst_err = float(errors[worst])
    return bool(worst_err <= tol), worst_err, tuple(int(k) for k in worst)
