def prefix_products_out(W, P):
    if W.ndim != 3 or W.shape[1] != W.shape[2]:
        raise TypeError("W must be a stack of square matrices")
    if P.shape != W.shape:
        raise ValueError("P must have W's shape")
    if len(W) == 0:
        return P
    P[0] = W[0]
    for i in range(1, len(W)):
        P[i] = P[i - 1] @ W[i]
    return P
