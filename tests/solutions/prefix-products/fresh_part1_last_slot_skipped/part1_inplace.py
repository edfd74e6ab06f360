"""Buggy: the loop stops one step early, so the last prefix P[N-1] is never written."""

from __future__ import annotations

import torch

EXPLANATION = """\
Every matmul in the autograd graph saves its operands for backward, and each tensor has a
version counter that an in-place write increments. P[i] = P[i-1] @ W[i] written into slices of a
single buffer overwrites the storage an earlier matmul saved, so backward notices the version
mismatch and raises 'one of the variables needed for gradient computation has been modified by
an inplace operation'. Fix it by building the products out of place and stacking them, or by a
custom autograd.Function that calls ctx.mark_dirty.
"""


def prefix_products_out(W: torch.Tensor, P: torch.Tensor) -> torch.Tensor:
    """P[i] = W[0] @ W[1] @ ... @ W[i], written into P, which is returned."""
    if W.ndim != 3 or W.size(1) != W.size(2):
        raise ValueError(f"W must be (N, D, D), got {tuple(W.shape)}")
    if P.shape != W.shape:
        raise ValueError(f"P must match W: {tuple(P.shape)} vs {tuple(W.shape)}")
    n = W.size(0)
    if n == 0:
        return P
    P[0] = W[0]
    idx = 1
    while idx < n - 1:
        P[idx] = P[idx - 1] @ W[idx]
        idx += 1
    return P
