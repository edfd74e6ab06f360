"""Known-good solution in an unusual style: the cache is an object with attributes."""

import torch


class Saved:
    def __init__(self, X, h):
        self.X = X.detach().clone()
        self.h = h


def mlp_forward(params, X):
    W1, b1, W2, b2 = (params[k] for k in ("W1", "b1", "W2", "b2"))
    if X.dim() != 2 or W1.dim() != 2 or W2.dim() != 2:
        raise ValueError("X, W1 and W2 must be matrices")
    if W1.shape[0] != X.shape[1] or W2.shape[0] != W1.shape[1]:
        raise ValueError("inner dimensions do not agree")
    if b1.shape != W1.shape[1:] or b2.shape != W2.shape[1:]:
        raise ValueError("a bias does not match its layer")
    z = torch.addmm(b1, X, W1)
    h = torch.where(z > 0, z, torch.zeros_like(z))
    return torch.addmm(b2, h, W2), Saved(X, h)
