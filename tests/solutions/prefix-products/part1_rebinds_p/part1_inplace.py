"""Buggy: `P = ...` rebinds the local name, so the caller's buffer keeps its old contents."""


def prefix_products_out(W, P):
    P = W * 1
    for i in range(1, len(W)):
        P[i] = P[i - 1] @ W[i]
    return P
