"""Buggy: every prefix recomputed from W[0]: right when P is separate, O(N^2 D^3), and wrong
when P is W (the early slots are prefixes by then)."""

EXPLANATION = ""


def prefix_products_out(W, P):
    if W.ndim != 3 or W.shape[1] != W.shape[2] or P.shape != W.shape:
        raise ValueError("W and P must both be (N, D, D)")
    for i in range(len(W)):
        product = W[0] * 1
        for j in range(1, i + 1):
            product = product @ W[j]
        P[i] = product
    return P
