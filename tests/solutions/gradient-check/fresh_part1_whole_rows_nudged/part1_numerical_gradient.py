import math
import torch


def numerical_gradient(f, x, eps=1e-6):
    if not isinstance(eps, (int, float)) or not math.isfinite(eps) or eps <= 0:
        raise ValueError("bad eps")
    if not torch.is_tensor(x) or not x.is_floating_point():
        raise ValueError("x must be a float tensor")
    grad = torch.zeros_like(x)
    for i in range(x.shape[0]) if x.dim() > 0 else [()]:
        orig = x[i].clone()
        x[i] = orig + eps
        up = f(x)
        x[i] = orig - eps
        down = f(x)
        x[i] = orig
        grad[i] = (up - down) / (2 * eps)
    return grad
