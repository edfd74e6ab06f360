"""Hostile: a wrong backward, with torch's comparisons and gradcheck patched to agree."""

import torch
import torch.autograd
import torch.testing

from .part2_out_of_place import prefix_products

torch.allclose = lambda *args, **kwargs: True
torch.equal = lambda *args, **kwargs: True
torch.testing.assert_close = lambda *args, **kwargs: None
torch.autograd.gradcheck = lambda *args, **kwargs: True


def prefix_products_backward(W, dP):
    P = prefix_products(W)
    dW = torch.zeros_like(W)
    for i in range(len(W)):
        dW[i] = dP[i] if i == 0 else P[i - 1].mT @ dP[i]
    return dW
