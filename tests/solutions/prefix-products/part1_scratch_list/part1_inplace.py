"""Buggy: keeps every product alive in a list before writing P (O(N * D^2) extra)."""


def prefix_products_out(W, P):
    products = [W[0]]
    for i in range(1, len(W)):
        products.append(products[-1] @ W[i])
    for i, product in enumerate(products):
        P[i] = product
    return P
