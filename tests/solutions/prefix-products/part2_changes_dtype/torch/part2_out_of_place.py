"""Buggy: always returns float32."""

import torch


def prefix_products(W):
    products = [W[0].float()] if len(W) else [W.float()]
    for i in range(1, len(W)):
        products.append(products[-1] @ W[i].float())
    return torch.stack(products) if len(W) else products[0]
