"""Buggy: computes out-of-place, then swaps the result's storage into P with set_."""

import torch


def prefix_products_out(W, P):
    products = [W[0]]
    for i in range(1, len(W)):
        products.append(products[-1] @ W[i])
    return P.set_(torch.stack(products))
