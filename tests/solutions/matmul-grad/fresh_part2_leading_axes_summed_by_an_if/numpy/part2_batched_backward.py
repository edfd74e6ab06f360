"""Part 2: batched matmul backward with broadcasting (numpy)."""

from __future__ import annotations

import numpy as np


def batch_shape(A: np.ndarray, B: np.ndarray) -> tuple[int, ...]:
    if A.ndim < 2 or B.ndim < 2:
        raise ValueError(f"need at least 2-D operands, got {A.shape} and {B.shape}")
    if A.shape[-1] != B.shape[-2]:
        raise ValueError(f"inner dimensions differ: {A.shape} @ {B.shape}")
    try:
        return tuple(np.broadcast_shapes(A.shape[:-2], B.shape[:-2]))
    except ValueError:
        raise ValueError(f"batch dims {A.shape[:-2]} and {B.shape[:-2]} do not broadcast") from None


def reduce_to(g: np.ndarray, target: tuple[int, ...]) -> np.ndarray:
    """Undo the broadcasting: sum g down to `target`."""
    # leading dims the input never had
    if g.ndim > len(target):
        g = g.sum(axis=0)
    # dims that were stretched from size 1
    stretched = tuple(ax for ax, n in enumerate(target) if n == 1)
    if stretched:
        g = g.sum(axis=stretched, keepdims=True)
    return g


def batched_matmul_backward(A: np.ndarray, B: np.ndarray,
                            dC: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    lead = batch_shape(A, B)
    want = (*lead, A.shape[-2], B.shape[-1])
    if dC.shape != want:
        raise ValueError(f"dC should be {want}, got {dC.shape}")
    gA = np.matmul(dC, np.swapaxes(B, -1, -2))
    gB = np.matmul(np.swapaxes(A, -1, -2), dC)
    return reduce_to(gA, A.shape), reduce_to(gB, B.shape)
