"""Buggy: the new factor goes on the left, as if matmul commuted."""


def prefix_products_out(W, P):
    P[0] = W[0]
    for i in range(1, len(W)):
        P[i] = W[i] @ P[i - 1]
    return P
