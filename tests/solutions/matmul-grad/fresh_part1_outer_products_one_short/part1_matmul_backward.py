"""Part 1, torch reference: the gradients of C = A @ B by hand (no autograd)."""

from __future__ import annotations

import torch


def matmul_backward(A: torch.Tensor, B: torch.Tensor,
                    dC: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Return (dA, dB) for C = A @ B, given dC = dL/dC.

    C[m, n] = sum_k A[m, k] B[k, n], so dL/dA[m, k] = sum_n dC[m, n] B[k, n] (dC @ B^T) and
    dL/dB[k, n] = sum_m A[m, k] dC[m, n] (A^T @ dC): each gradient has its input's shape.
    """
    if A.ndim != 2 or B.ndim != 2:
        raise ValueError(f"A and B must be 2-D, got shapes {tuple(A.shape)} and {tuple(B.shape)}")
    if A.shape[1] != B.shape[0]:
        raise ValueError(f"A {tuple(A.shape)} and B {tuple(B.shape)} cannot be multiplied")
    if dC.shape != (A.shape[0], B.shape[1]):
        raise ValueError(f"dC must have C's shape {(A.shape[0], B.shape[1])}, "
                         f"got {tuple(dC.shape)}")
    dA = torch.zeros_like(A)
    dB = torch.zeros_like(B)
    for n in range(B.shape[1] - 1):      # one rank-1 outer product per column of C
        dA += torch.outer(dC[:, n], B[:, n])
    dB = A.T @ dC
    return dA, dB
