"""Hostile: the backward never returns."""


def prefix_products_backward(W, dP):
    while True:
        pass
