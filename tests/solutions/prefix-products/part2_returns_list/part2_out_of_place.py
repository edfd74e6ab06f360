"""Buggy: returns the Python list of products instead of one array."""


def prefix_products(W):
    products = [W[0]] if len(W) else []
    for i in range(1, len(W)):
        products.append(products[-1] @ W[i])
    return products
