"""Part 3 whose one-sided differences undo each nudge by subtracting it: not bit for bit."""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable

import numpy as np

from .part1_numerical_gradient import numerical_gradient
from .part2_relative_error import relative_error

EPS = 1e-6
KINK_GAP = 1e-3
"""One-sided slopes further apart than this (relative error) mean a kink: for a smooth f they
differ by about eps * |f''|, a millionth of the slope at eps = 1e-6; at a kink by the jump in
the derivative, whatever eps is."""


def _shifted(f: Callable[[np.ndarray], float], x: np.ndarray, index: tuple[int, ...],
             step: float) -> float:
    """f with x[index] moved by step, x put back bit for bit afterwards."""
    x[index] += step
    try:
        return f(x)
    finally:
        x[index] -= step


def _at_kink(f: Callable[[np.ndarray], float], x: np.ndarray, index: tuple[int, ...],
             f_x: float, analytic: float, tol: float) -> bool:
    """The one-sided slopes at x[index] disagree, and the analytic value lies between them (it
    is a one-sided derivative: a valid answer at a kink, not a bug)."""
    forward = (_shifted(f, x, index, EPS) - f_x) / EPS
    backward = (f_x - _shifted(f, x, index, -EPS)) / EPS
    if relative_error(np.asarray(forward), np.asarray(backward)) <= KINK_GAP:
        return False
    slack = tol * max(abs(forward), abs(backward))
    return min(forward, backward) - slack <= analytic <= max(forward, backward) + slack


def check_gradient(f: Callable[[np.ndarray], float], grad_f: Callable[[np.ndarray], np.ndarray],
                   x: np.ndarray, tol: float = 1e-6) -> tuple[bool, tuple[int, ...] | None, float]:
    """(ok, worst_index, worst_error) for grad_f against central differences of f at x.

    Per entry the relative error of Part 2; an entry over tol is looked at once more with
    one-sided differences, and one at a kink is left out of the comparison (with a UserWarning
    that names it). A float32 x gets a UserWarning asking for float64.
    """
    if not isinstance(tol, int | float) or not math.isfinite(tol) or tol <= 0:
        raise ValueError(f"tol must be a positive finite number, got {tol!r}")
    if x.dtype != np.float64:
        warnings.warn(f"check_gradient on a {x.dtype} x: at eps = {EPS:g} rounding swamps the "
                      "central differences below float64; convert x to float64 and check again",
                      UserWarning, stacklevel=2)
    analytic = np.asarray(grad_f(x))
    if analytic.shape != x.shape:
        raise ValueError(f"grad_f(x) has shape {analytic.shape}, x has shape {x.shape}")
    numeric = numerical_gradient(f, x, EPS)
    errors = {i: relative_error(analytic[i], numeric[i]) for i in np.ndindex(*x.shape)}
    suspects = [i for i, error in errors.items() if not error <= tol]
    if suspects:
        f_x = f(x)
        kinks = [i for i in suspects if _at_kink(f, x, i, f_x, float(analytic[i]), tol)]
        if kinks:
            warnings.warn(f"f is not differentiable at {len(kinks)} entr"
                          f"{'y' if len(kinks) == 1 else 'ies'} of x (a kink), first at "
                          f"{kinks[0]}: the one-sided differences disagree; not compared there",
                          UserWarning, stacklevel=2)
            for i in kinks:
                del errors[i]
    if not errors:
        return True, None, 0.0
    worst = max(errors, key=lambda i: math.inf if math.isnan(errors[i]) else errors[i])
    worst_error = errors[worst]
    return bool(worst_error <= tol), tuple(int(k) for k in worst), float(worst_error)
