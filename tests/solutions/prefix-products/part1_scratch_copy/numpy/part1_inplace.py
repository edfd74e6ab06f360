"""Buggy: works on a full copy of the stack, then copies it into P (O(N * D^2) extra)."""


def prefix_products_out(W, P):
    work = W.copy()
    for i in range(1, len(W)):
        work[i] = work[i - 1] @ W[i]
    P[...] = work
    return P
