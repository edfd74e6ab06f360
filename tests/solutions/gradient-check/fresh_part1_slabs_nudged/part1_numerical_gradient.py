import math

import numpy as np


def numerical_gradient(f, x, eps=1e-6):
    if not isinstance(eps, (int, float)) or isinstance(eps, bool) or not math.isfinite(eps) \
            or eps <= 0:
        raise ValueError("eps must be a positive finite number")
    if not isinstance(x, np.ndarray) or x.dtype.kind != "f":
        raise ValueError("x must be a floating-point array")
    grad = np.empty_like(x)
    if x.ndim == 0:
        saved = x[()]
        x[()] = saved + eps
        up = f(x)
        x[()] = saved - eps
        down = f(x)
        x[()] = saved
        grad[()] = (up - down) / (2 * eps)
        return grad
    rows = x.shape[0]
    cols = x.shape[1] if x.ndim > 1 else None
    for i in range(rows):
        for j in range(cols) if cols is not None else [None]:
            at = (i,) if j is None else (i, j)
            saved = x[at].copy()
            x[at] = saved + eps
            up = f(x)
            x[at] = saved - eps
            down = f(x)
            x[at] = saved
            grad[at] = (up - down) / (2 * eps)
    return grad
