"""Buggy: the gradients are computed after casting everything to float32, so float64 inputs get float32, less precise results."""

from __future__ import annotations

import torch


def matmul_backward(A: torch.Tensor, B: torch.Tensor,
                    dC: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """(dL/dA, dL/dB) for C = A @ B given dL/dC."""
    if A.dim() != 2 or B.dim() != 2:
        raise ValueError(f"need 2-D A and B, got {tuple(A.shape)} and {tuple(B.shape)}")
    if A.size(1) != B.size(0):
        raise ValueError(f"inner dimensions differ: {tuple(A.shape)} @ {tuple(B.shape)}")
    if tuple(dC.shape) != (A.size(0), B.size(1)):
        raise ValueError(f"dC should be {(A.size(0), B.size(1))}, got {tuple(dC.shape)}")
    a, b, g = A.float(), B.float(), dC.float()
    return torch.mm(g, b.t()), torch.mm(a.t(), g)
