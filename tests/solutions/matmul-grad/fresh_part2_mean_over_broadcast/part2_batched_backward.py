"""Buggy: gradients are reduced over the broadcast batch axes with mean instead of sum."""

from __future__ import annotations

import torch


def batch_shape(A: torch.Tensor, B: torch.Tensor) -> tuple[int, ...]:
    """Broadcast batch shape of A (..., M, K) @ B (..., K, N); ValueError if incompatible."""
    if A.dim() < 2 or B.dim() < 2:
        raise ValueError(f"A and B must have at least 2 dims, got {tuple(A.shape)} and "
                         f"{tuple(B.shape)}")
    if A.shape[-1] != B.shape[-2]:
        raise ValueError(f"inner sizes differ: {tuple(A.shape)} @ {tuple(B.shape)}")
    a_batch, b_batch = list(A.shape[:-2]), list(B.shape[:-2])
    width = max(len(a_batch), len(b_batch))
    a_batch = [1] * (width - len(a_batch)) + a_batch
    b_batch = [1] * (width - len(b_batch)) + b_batch
    out = []
    for x, y in zip(a_batch, b_batch):
        if x != y and x != 1 and y != 1:
            raise ValueError(f"batch dims {tuple(A.shape[:-2])} and {tuple(B.shape[:-2])} "
                             "do not broadcast")
        out.append(y if x == 1 else x)
    return tuple(out)


def _reduce_to(grad: torch.Tensor, shape: torch.Size) -> torch.Tensor:
    lead = grad.dim() - len(shape)
    if lead:
        grad = grad.mean(dim=tuple(range(lead)))
    dims = [i for i, (have, want) in enumerate(zip(grad.shape, shape)) if want == 1 and have != 1]
    if dims:
        grad = grad.mean(dim=dims, keepdim=True)
    return grad


def batched_matmul_backward(A: torch.Tensor, B: torch.Tensor,
                            dC: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """(dA, dB) for the broadcasting matmul C = A @ B."""
    want = (*batch_shape(A, B), A.shape[-2], B.shape[-1])
    if tuple(dC.shape) != want:
        raise ValueError(f"dC must be {want}, got {tuple(dC.shape)}")
    dA = _reduce_to(torch.matmul(dC, B.transpose(-1, -2)), A.shape)
    dB = _reduce_to(torch.matmul(A.transpose(-1, -2), dC), B.shape)
    return dA, dB
