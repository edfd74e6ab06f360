import itertools

import torch


def numerical_gradient(f, x, eps=1e-6):
    g = torch.empty_like(x)
    for i in itertools.product(*map(range, x.shape)):
        saved = x[i].item()
        x[i] = saved + eps
        plus = f(x)
        x[i] = saved - eps
        minus = f(x)
        x[i] = saved
        g[i] = (plus - minus) / (2 * eps)
    return g
