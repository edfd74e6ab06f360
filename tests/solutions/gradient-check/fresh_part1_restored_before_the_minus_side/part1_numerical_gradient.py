import math
import numpy as np


def numerical_gradient(f, x, eps=1e-6):
    if not isinstance(eps, (int, float)) or not math.isfinite(eps) or eps <= 0:
        raise ValueError("eps must be positive and finite")
    if not isinstance(x, np.ndarray) or not np.issubdtype(x.dtype, np.floating):
        raise ValueError("x must be a float array")
    grad = np.zeros_like(x)
    it = np.nditer(x, flags=["multi_index"], op_flags=["readwrite"])
    while not it.finished:
        ix = it.multi_index
        old = x[ix]
        x[ix] = old + eps
        fxph = f(x)
        x[ix] = old - eps
        x[ix] = old          # restore
        fxmh = f(x)
        grad[ix] = (fxph - fxmh) / (2 * eps)
        it.iternext()
    return grad
