"""Hostile (by accident): fails while being imported."""

SETTINGS = {"depth": 3}
DEPTH = SETTINGS["width"]


def prefix_products_out(W, P):
    return P
