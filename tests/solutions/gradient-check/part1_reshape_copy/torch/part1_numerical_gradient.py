import itertools
import math

import torch


def _validate(x, eps):
    if not (isinstance(eps, (int, float)) and math.isfinite(eps) and eps > 0):
        raise ValueError("eps must be a positive finite number")
    if not x.is_floating_point():
        raise ValueError("x must be floating point")


def numerical_gradient(f, x, eps=1e-6):
    _validate(x, eps)
    flat = x.reshape(-1)
    g = torch.empty(flat.shape, dtype=x.dtype)
    for k in range(flat.numel()):
        saved = flat[k].item()
        flat[k] = saved + eps
        plus = f(x)
        flat[k] = saved - eps
        minus = f(x)
        flat[k] = saved
        g[k] = (plus - minus) / (2 * eps)
    return g.reshape(x.shape)
