"""Buggy: the loop stops one short, so P[N-1] keeps the caller's NaN."""

EXPLANATION = ""


def prefix_products_out(W, P):
    if W.ndim != 3 or W.shape[1] != W.shape[2] or P.shape != W.shape:
        raise ValueError("W and P must both be (N, D, D)")
    if len(W) == 0:
        return P
    P[0] = W[0]
    for i in range(1, len(W) - 1):
        P[i] = P[i - 1] @ W[i]
    return P
