"""Buggy: each new factor is multiplied on the left, P[i] = W[i] @ P[i-1], instead of on the right."""

from __future__ import annotations

import torch

EXPLANATION = """\
Autograd saves the inputs of each matmul for its backward pass and tracks a version counter on
every tensor. Filling one preallocated buffer slot by slot with P[i] = P[i-1] @ W[i] rewrites
memory that an earlier matmul saved, the version counter moves, and backward raises the
'modified by an inplace operation' error. Build the result out of place (collect new tensors and
torch.stack them) or use a custom autograd.Function that marks the buffer dirty.
"""


def prefix_products_out(W: torch.Tensor, P: torch.Tensor) -> torch.Tensor:
    """Write the running products of W into P and return P."""
    if W.dim() != 3 or W.shape[-1] != W.shape[-2]:
        raise ValueError(f"expected W of shape (N, D, D), got {tuple(W.shape)}")
    if P.shape != W.shape:
        raise ValueError(f"P has shape {tuple(P.shape)}, W has shape {tuple(W.shape)}")
    count = W.shape[0]
    if count == 0:
        return P
    P[0].copy_(W[0])
    for k in range(1, count):
        P[k] = torch.mm(W[k], P[k - 1])
    return P
