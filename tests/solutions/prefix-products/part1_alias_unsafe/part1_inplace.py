"""Buggy when P is W: each product is written row by row into slot i while later rows still
read W[i], which that same slot holds."""


def prefix_products_out(W, P):
    P[0] = W[0]
    for i in range(1, len(W)):
        for row in range(W.shape[1]):
            P[i, row] = P[i - 1, row] @ W[i]
    return P
