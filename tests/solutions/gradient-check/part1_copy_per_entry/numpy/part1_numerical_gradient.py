import numpy as np


def numerical_gradient(f, x, eps=1e-6):
    """x is never written: each side is a copy with one entry moved, and the divisor is
    the distance between the two points as stored (exact in binary, not 2 * eps)."""
    try:
        step = float(eps)
    except (TypeError, ValueError):
        raise ValueError(f"eps must be a number, got {eps!r}") from None
    if not np.isfinite(step) or step <= 0:
        raise ValueError(f"eps must be positive and finite, got {eps!r}")
    if x.dtype.kind != "f":
        raise ValueError(f"x must be floating point, got {x.dtype}")
    g = np.empty_like(x)
    for i in np.ndindex(*x.shape):
        up, down = x.copy(), x.copy()
        up[i] += step
        down[i] -= step
        g[i] = (f(up) - f(down)) / (up[i] - down[i])
    return g
