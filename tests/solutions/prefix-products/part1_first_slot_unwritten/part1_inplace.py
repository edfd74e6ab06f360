"""Buggy: starts the loop at 1 and never writes P[0]."""


def prefix_products_out(W, P):
    for i in range(1, len(W)):
        previous = W[0] if i == 1 else P[i - 1]
        P[i] = previous @ W[i]
    return P
