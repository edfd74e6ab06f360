import torch
import torch.nn.functional as F


def layernorm_forward(x, gamma, beta, eps=1e-5):
    if x.ndim < 2 or gamma.shape != x.shape[-1:] or beta.shape != x.shape[-1:]:
        raise ValueError("gamma and beta must be (D,) for x of shape (..., D)")
    if eps < 0:
        raise ValueError("eps must be >= 0")
    y = F.layer_norm(x, x.shape[-1:], gamma, beta, eps)
    return y, {"x": x.clone(), "gamma": gamma.clone(), "eps": eps}


def layernorm_backward(dy, cache):
    x, gamma, eps = cache["x"], cache["gamma"], cache["eps"]
    if dy.shape != x.shape:
        raise ValueError("dy must have x's shape")
    centred = x - x.mean(-1, keepdim=True)
    istd = 1 / torch.sqrt(centred.pow(2).mean(-1, keepdim=True) + eps)
    xhat = centred * istd
    g = dy * gamma
    dx = istd * (g - g.mean(-1, keepdim=True) - xhat * (g * xhat).mean(-1, keepdim=True))
    rows = dy.reshape(-1, dy.shape[-1])
    return dx, (rows * xhat.reshape(rows.shape)).sum(0), rows.sum(0)
