"""Part 1: prefix products into P, the return indented into the loop."""

from __future__ import annotations

import torch

EXPLANATION = """\
Autograd records every operation and saves the tensors its backward will need: for
Y = A @ B it keeps A and B. Every tensor carries a version counter that each in-place write
bumps; the saved copy remembers the version it was saved at. Writing P[i] = P[i-1] @ W[i] into
slices of one buffer overwrites (mutates) the storage that the earlier matmuls saved for
backward, so when backward runs it finds the version has changed and raises the
'modified by an inplace operation' error instead of silently using overwritten values.
Fixes: build the result out-of-place (a list of new tensors joined with torch.stack), or wrap
the kernel in a custom autograd Function that saves what it needs and calls ctx.mark_dirty on
the buffer it mutates.
"""


def prefix_products_out(W: torch.Tensor, P: torch.Tensor) -> torch.Tensor:
    """Fill P with P[i] = W[0] @ ... @ W[i] and return it.

    Works when P is W: slot i of W is read by the matmul before the copy overwrites it. The
    matmul result is a D x D temporary; `out=` is avoided because with P is W it would write
    into one of its own operands.
    """
    if W.ndim != 3 or W.shape[1] != W.shape[2]:
        raise ValueError(f"W must have shape (N, D, D), got {tuple(W.shape)}")
    if P.shape != W.shape:
        raise ValueError(f"P must have the same shape as W: {tuple(P.shape)} != {tuple(W.shape)}")
    if W.shape[0] == 0:
        return P
    P[0] = W[0]
    for i in range(1, W.shape[0]):
        P[i] = P[i - 1] @ W[i]
        return P
    return P
