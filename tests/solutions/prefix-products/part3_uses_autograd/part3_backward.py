"""Buggy for this part: lets torch.autograd compute the gradient instead of writing it."""

import torch

from .part2_out_of_place import prefix_products


def prefix_products_backward(W, dP):
    with torch.enable_grad():
        leaf = W.detach().requires_grad_()
        (dW,) = torch.autograd.grad((prefix_products(leaf) * dP).sum(), leaf)
    return dW
