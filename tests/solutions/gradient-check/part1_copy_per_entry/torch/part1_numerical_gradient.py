import torch


def _index(flat, shape):
    """The multi-index of position `flat` in row-major order (() for a 0-d shape)."""
    index = []
    for size in reversed(shape):
        flat, k = divmod(flat, size)
        index.append(k)
    return tuple(reversed(index))


def numerical_gradient(f, x, eps=1e-6):
    """x is never written: each side is a clone with one entry moved, and the divisor is
    the distance between the two points as stored (exact in binary, not 2 * eps)."""
    try:
        step = float(eps)
    except (TypeError, ValueError):
        raise ValueError(f"eps must be a number, got {eps!r}") from None
    if not step > 0 or step == float("inf"):
        raise ValueError(f"eps must be positive and finite, got {eps!r}")
    if not torch.is_floating_point(x):
        raise ValueError(f"x must be floating point, got {x.dtype}")
    g = torch.empty_like(x)
    for flat in range(x.numel()):
        i = _index(flat, x.shape)
        up, down = x.clone(), x.clone()
        up[i] += step
        down[i] -= step
        g[i] = (f(up) - f(down)) / (up[i] - down[i])
    return g
