"""Part 4: the Hillis-Steele scan; each level's low slots are never written."""

from __future__ import annotations

import numpy as np


def hillis_steele_scan_forward(W: np.ndarray) -> tuple[np.ndarray, list[tuple[int, np.ndarray]]]:
    if W.ndim != 3 or W.shape[1] != W.shape[2]:
        raise ValueError(f"W must have shape (N, D, D), got {W.shape}")
    cur = np.array(W, copy=True)
    levels = []
    offset = 1
    while offset < len(W):
        levels.append((offset, cur))
        nxt = np.empty_like(cur)
        nxt[offset:] = cur[:-offset] @ cur[offset:]
        cur = nxt
        offset <<= 1
    return cur, levels


def hillis_steele_scan_backward(levels: list[tuple[int, np.ndarray]], dP: np.ndarray) -> np.ndarray:
    """Return dW by walking the levels in reverse, batched per level.

    For new[i] = A @ B with A = old[i - s], B = old[i] and G = dL/dnew[i]: A gets G @ B^T and
    B gets A^T @ G; indices below s pass their gradient through unchanged.
    """
    grad = dP.copy()
    for step, old in reversed(levels):
        upstream = grad
        grad = np.empty_like(upstream)
        grad[:step] = upstream[:step]
        np.matmul(np.swapaxes(old[:-step], -1, -2), upstream[step:], out=grad[step:])
        grad[:-step] += upstream[step:] @ np.swapaxes(old[step:], -1, -2)
    return grad
