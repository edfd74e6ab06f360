"""Buggy: the forward updates one buffer in place, so every saved level is the same array holding the final values, and the backward reads stale snapshots."""

from __future__ import annotations

import numpy as np


def hillis_steele_scan_forward(W: np.ndarray) -> tuple[np.ndarray, list[tuple[int, np.ndarray]]]:
    """Inclusive prefix products by recursive doubling; returns (P, per-level snapshots)."""
    if W.ndim != 3 or W.shape[-2] != W.shape[-1]:
        raise ValueError(f"W must be (N, D, D), got {W.shape}")
    n = W.shape[0]
    buf = W.copy()
    snapshots: list[tuple[int, np.ndarray]] = []
    shift = 1
    while shift < n:
        snapshots.append((shift, buf))
        # the right-hand side is evaluated into a temporary before the slice is written
        buf[shift:] = np.matmul(buf[:-shift], buf[shift:])
        shift *= 2
    return buf, snapshots


def hillis_steele_scan_backward(levels: list[tuple[int, np.ndarray]], dP: np.ndarray) -> np.ndarray:
    """dW from dP, undoing the levels last to first."""
    grad = dP.copy()
    for shift, prev in reversed(levels):
        up = grad
        grad = up.copy()
        grad[shift:] = np.matmul(prev[:-shift].swapaxes(1, 2), up[shift:])
        grad[:-shift] += np.matmul(up[shift:], prev[shift:].swapaxes(1, 2))
    return grad
