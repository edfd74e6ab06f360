"""Right values through a scratch copy of the whole stack (O(N D^2) extra memory), with the
process's own observation forged: tracemalloc, which the numpy flavor's memory probe reads,
reports no memory at all. In `grade` what the process observes of itself only advises, so the
forgery earns nothing."""

import tracemalloc

import numpy as np

EXPLANATION = ""
tracemalloc.get_traced_memory = lambda: (0, 0)


def prefix_products_out(W, P):
    if W.ndim != 3 or W.shape[1] != W.shape[2] or P.shape != W.shape:
        raise ValueError("W must be (N, D, D) and P like it")
    scratch = [np.array(W[0])] if len(W) else []
    for i in range(1, len(W)):
        scratch.append(scratch[-1] @ W[i])
    for i, product in enumerate(scratch):
        P[i] = product
    return P
