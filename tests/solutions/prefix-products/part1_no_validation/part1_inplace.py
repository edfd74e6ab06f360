"""Buggy: trusts its inputs; malformed shapes run on (or die deep inside a matmul)."""


def prefix_products_out(W, P):
    if len(W) == 0:
        return P
    P[0] = W[0]
    for i in range(1, len(W)):
        P[i] = P[i - 1] @ W[i]
    return P
