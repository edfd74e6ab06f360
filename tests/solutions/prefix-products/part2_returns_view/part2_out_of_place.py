"""Buggy: reuses Part 1 with P = W (aliasing is allowed there), so it overwrites W and returns
a view of it."""

from .part1_inplace import prefix_products_out


def prefix_products(W):
    return prefix_products_out(W, W)[:]
