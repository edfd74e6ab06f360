"""Buggy: the function is there, under another name than the contract's."""


def prefix_product_out(W, P):
    P[0] = W[0]
    for i in range(1, len(W)):
        P[i] = P[i - 1] @ W[i]
    return P
