"""Buggy: builds a new array and returns it; the caller's P is never filled."""

import numpy as np


def prefix_products_out(W, P):
    products = [W[0]]
    for i in range(1, len(W)):
        products.append(products[-1] @ W[i])
    return np.stack(products)
