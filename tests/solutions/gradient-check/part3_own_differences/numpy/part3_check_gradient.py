import math
import warnings

import numpy as np


def check_gradient(f, grad_f, x, tol=1e-6):
    """Everything from one pass: f(x), f(x + h e_i) and f(x - h e_i) give the central and
    both one-sided slopes, so every entry is tested for a kink at no extra cost."""
    if not (isinstance(tol, (int, float)) and 0 < tol < math.inf):
        raise ValueError(f"tol must be positive and finite, got {tol!r}")
    if x.dtype != np.float64:
        warnings.warn(f"{x.dtype} is too coarse for eps = 1e-6: check in float64",
                      UserWarning)
    analytic = np.asarray(grad_f(x), dtype=np.float64)
    if analytic.shape != x.shape:
        raise ValueError(f"gradient shape {analytic.shape} != x shape {x.shape}")
    h = 1e-6
    work = x.copy()
    f0 = float(f(work))
    up, down = np.empty(x.shape), np.empty(x.shape)
    for i in np.ndindex(*x.shape):
        kept = work[i]
        work[i] = kept + h
        up[i] = float(f(work))
        work[i] = kept - h
        down[i] = float(f(work))
        work[i] = kept
    central = (up - down) / (2 * h)
    forward, backward = (up - f0) / h, (f0 - down) / h
    tiny = np.finfo(np.float64).tiny
    error = np.abs(analytic - central) / np.maximum(
        np.maximum(np.abs(analytic), np.abs(central)), tiny)
    gap = np.abs(forward - backward) > 1e-3 * np.maximum(np.abs(forward), np.abs(backward))
    between = (np.minimum(forward, backward) - 1e-9 <= analytic) & (
        analytic <= np.maximum(forward, backward) + 1e-9)
    kink = (error > tol) & gap & between
    if kink.any():
        where = [tuple(int(k) for k in i) for i in np.argwhere(kink)]
        warnings.warn(f"not differentiable at {where}: skipped", UserWarning)
    error = np.where(kink, -1.0, np.where(np.isnan(error), np.inf, error))
    if error.size == 0 or kink.all():
        return True, None, 0.0
    k = int(np.argmax(error))
    worst = tuple(int(i) for i in np.unravel_index(k, x.shape))
    return bool(error[worst] <= tol), worst, float(error[worst])
