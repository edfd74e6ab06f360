"""Buggy: always computes in float32."""

import numpy as np

from .part1_inplace import prefix_products_out


def prefix_products(W):
    return prefix_products_out(W, np.empty(W.shape, dtype=np.float32))
