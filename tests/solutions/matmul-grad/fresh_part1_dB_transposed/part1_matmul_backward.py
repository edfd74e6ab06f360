"""Buggy: dB is computed as dC^T @ A, which is the transpose of the correct A^T @ dC."""

from __future__ import annotations

import torch


def matmul_backward(A: torch.Tensor, B: torch.Tensor,
                    dC: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """(dL/dA, dL/dB) for C = A @ B given dL/dC."""
    if A.ndim != 2 or B.ndim != 2:
        raise ValueError(f"A and B must be matrices, got {tuple(A.shape)}, {tuple(B.shape)}")
    rows, inner = A.shape
    if B.shape[0] != inner:
        raise ValueError(f"cannot multiply {tuple(A.shape)} by {tuple(B.shape)}")
    if dC.shape != (rows, B.shape[1]):
        raise ValueError(f"dC must be {(rows, B.shape[1])}, got {tuple(dC.shape)}")
    dA = dC @ B.transpose(0, 1)
    dB = dC.transpose(0, 1) @ A
    return dA, dB
