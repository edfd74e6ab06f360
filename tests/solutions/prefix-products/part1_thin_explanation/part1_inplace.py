"""Right products; the explanation names the version counter and nothing else."""

EXPLANATION = "In-place writes bump the version counter."


def prefix_products_out(W, P):
    if W.ndim != 3 or W.shape[1] != W.shape[2] or P.shape != W.shape:
        raise ValueError("W and P must both have shape (N, D, D)")
    for i in range(len(W)):
        P[i] = W[0] if i == 0 else P[i - 1] @ W[i]
    return P
