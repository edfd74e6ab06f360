"""Buggy: dA is summed back to A's shape but dB is returned at the broadcast shape, never reduced."""

from __future__ import annotations

import torch


def batch_shape(A: torch.Tensor, B: torch.Tensor) -> tuple[int, ...]:
    """Broadcast batch shape of A (..., M, K) @ B (..., K, N); ValueError if incompatible."""
    if A.ndim < 2 or B.ndim < 2:
        raise ValueError(f"A and B must have at least 2 dims, got {tuple(A.shape)} and "
                         f"{tuple(B.shape)}")
    if A.shape[-1] != B.shape[-2]:
        raise ValueError(f"inner sizes differ: {tuple(A.shape)} @ {tuple(B.shape)}")
    result: list[int] = []
    sa, sb = tuple(A.shape[:-2]), tuple(B.shape[:-2])
    for back in range(1, max(len(sa), len(sb)) + 1):
        x = sa[-back] if back <= len(sa) else 1
        y = sb[-back] if back <= len(sb) else 1
        if x != y and 1 not in (x, y):
            raise ValueError(f"batch dims {sa} and {sb} do not broadcast")
        result.append(max(x, y) if 1 in (x, y) else x)
    return tuple(reversed(result))


def batched_matmul_backward(A: torch.Tensor, B: torch.Tensor,
                            dC: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """(dA, dB) for the broadcasting matmul C = A @ B."""
    expected = (*batch_shape(A, B), A.shape[-2], B.shape[-1])
    if tuple(dC.shape) != expected:
        raise ValueError(f"dC must be {expected}, got {tuple(dC.shape)}")
    dA = torch.matmul(dC, B.mT).sum_to_size(A.shape)
    dB = torch.matmul(A.mT, dC)
    return dA, dB
