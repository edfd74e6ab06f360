"""Part 2, torch reference: out-of-place prefix products that autograd can differentiate."""

from __future__ import annotations

import torch


def prefix_products(W: torch.Tensor) -> torch.Tensor:
    """Return a new tensor P with P[i] = W[0] @ ... @ W[i].

    Every product is a fresh tensor and torch.stack copies them into the result, so nothing a
    matmul saved for backward is ever written again (calling Part 1 on a preallocated P would).
    """
    if W.ndim != 3 or W.shape[1] != W.shape[2]:
        raise ValueError(f"W must have shape (N, D, D), got {tuple(W.shape)}")
    if W.shape[0] == 0:
        return W.clone()
    products = [W[0]]
    for i in range(1, W.shape[0]):
        products.append(products[-1] @ W[i])
    return torch.stack(products, dim=1)
