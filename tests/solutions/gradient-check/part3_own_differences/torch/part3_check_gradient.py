import math
import warnings

import torch


def _index(flat, shape):
    """The multi-index of position `flat` in row-major order (() for a 0-d shape)."""
    index = []
    for size in reversed(shape):
        flat, k = divmod(flat, size)
        index.append(k)
    return tuple(reversed(index))


def check_gradient(f, grad_f, x, tol=1e-6):
    """Everything from one pass: f(x), f(x + h e_i) and f(x - h e_i) give the central and
    both one-sided slopes, so every entry is tested for a kink at no extra cost."""
    if not (isinstance(tol, (int, float)) and 0 < tol < math.inf):
        raise ValueError(f"tol must be positive and finite, got {tol!r}")
    if x.dtype != torch.float64:
        warnings.warn(f"{x.dtype} is too coarse for eps = 1e-6: check in float64",
                      UserWarning)
    analytic = grad_f(x).double()
    if analytic.shape != x.shape:
        raise ValueError(f"gradient shape {tuple(analytic.shape)} != {tuple(x.shape)}")
    h = 1e-6
    work = x.clone()
    flat = work.view(-1)
    f0 = float(f(work))
    up = torch.empty(flat.numel(), dtype=torch.float64)
    down = torch.empty(flat.numel(), dtype=torch.float64)
    for k in range(flat.numel()):
        kept = flat[k].item()
        flat[k] = kept + h
        up[k] = float(f(work))
        flat[k] = kept - h
        down[k] = float(f(work))
        flat[k] = kept
    central, forward, backward = (up - down) / (2 * h), (up - f0) / h, (f0 - down) / h
    a = analytic.reshape(-1)
    tiny = torch.finfo(torch.float64).tiny
    error = (a - central).abs() / torch.clamp(torch.maximum(a.abs(), central.abs()), min=tiny)
    gap = (forward - backward).abs() > 1e-3 * torch.maximum(forward.abs(), backward.abs())
    between = (torch.minimum(forward, backward) - 1e-9 <= a) & (
        a <= torch.maximum(forward, backward) + 1e-9)
    kink = (error > tol) & gap & between
    if kink.any():
        warnings.warn(f"not differentiable at flat positions {kink.nonzero().tolist()}",
                      UserWarning)
    if error.numel() == 0 or kink.all():
        return True, None, 0.0
    error = torch.where(kink, -1.0, torch.nan_to_num(error, nan=math.inf))
    k = int(error.argmax())
    worst = _index(k, x.shape)
    return bool(error[k] <= tol), worst, float(error[k])
