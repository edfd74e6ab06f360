"""Buggy: W[0] is taken before asking whether there is a W[0]."""

import numpy as np


def prefix_products(W):
    products = [W[0]]
    for i in range(1, len(W)):
        products.append(products[-1] @ W[i])
    return np.stack(products)
