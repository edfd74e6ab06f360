"""Hostile: a right answer buried in output, at import and on every call, through print and
straight to the file descriptors."""

import os
import sys

print("importing part 1 " + "=" * 100_000)


def prefix_products_out(W, P):
    print("debug " * 50_000)
    sys.stderr.write("warning " * 50_000 + "\n")
    os.write(1, b"raw stdout\n" * 1000)
    os.write(2, b"raw stderr\n" * 1000)
    if W.ndim != 3 or W.shape[1] != W.shape[2] or P.shape != W.shape:
        raise ValueError("W and P must both have shape (N, D, D)")
    if len(W):
        P[0] = W[0]
    for i in range(1, len(W)):
        P[i] = P[i - 1] @ W[i]
    return P
