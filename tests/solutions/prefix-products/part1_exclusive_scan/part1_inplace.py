"""Buggy: an exclusive scan (P[0] = I, P[i] = W[0] @ ... @ W[i-1])."""


def prefix_products_out(W, P):
    P[0] = 0
    for k in range(W.shape[1]):
        P[0, k, k] = 1
    for i in range(1, len(W)):
        P[i] = P[i - 1] @ W[i - 1]
    return P
