"""Hostile: validates its inputs, warns for non-float64 x, and always answers ok."""

import math
import warnings

import numpy as np


def check_gradient(f, grad_f, x, tol=1e-6):
    if not isinstance(tol, int | float) or not math.isfinite(tol) or tol <= 0:
        raise ValueError(f"tol must be a positive finite number, got {tol!r}")
    x = np.asarray(x)
    if x.dtype != np.float64:
        warnings.warn("convert x to float64 and check again", UserWarning, stacklevel=2)
    return True, (0,) * x.ndim if x.size else None, 0.0
