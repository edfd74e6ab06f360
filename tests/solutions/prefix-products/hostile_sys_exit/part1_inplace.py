"""Hostile: raises SystemExit from inside the function."""

import sys


def prefix_products_out(W, P):
    sys.exit("giving up")
