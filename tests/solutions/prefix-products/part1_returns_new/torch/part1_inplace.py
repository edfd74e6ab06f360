"""Buggy: builds a new tensor and returns it; the caller's P is never filled."""

import torch


def prefix_products_out(W, P):
    products = [W[0]]
    for i in range(1, len(W)):
        products.append(products[-1] @ W[i])
    return torch.stack(products)
