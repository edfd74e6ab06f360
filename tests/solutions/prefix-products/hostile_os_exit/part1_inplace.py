"""Hostile: leaves the process from inside the function."""

import os


def prefix_products_out(W, P):
    os._exit(0)
