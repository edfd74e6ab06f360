"""Hostile: allocates without bound (address space only: the pages are never touched)."""


def prefix_products_out(W, P):
    hoard = []
    for _ in range(32):
        hoard.append(bytearray(1 << 27))
    return P
