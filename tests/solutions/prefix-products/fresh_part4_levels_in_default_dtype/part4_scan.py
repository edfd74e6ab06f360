"""Part 4, numpy reference: Hillis-Steele inclusive scan under matmul, forward and backward."""

from __future__ import annotations

import numpy as np


def hillis_steele_scan_forward(W: np.ndarray) -> tuple[np.ndarray, list[tuple[int, np.ndarray]]]:
    """Return (P, levels): ceil(log2 N) levels, one batched matmul each.

    Level with offset s: new[i] = old[i - s] @ old[i] for i >= s (the lower index is the left
    factor: matmul is associative, not commutative), new[i] = old[i] below s. Each level reads
    only the previous level's snapshot, which is what `levels` keeps for the backward.
    """
    if W.ndim != 3 or W.shape[1] != W.shape[2]:
        raise ValueError(f"W must have shape (N, D, D), got {W.shape}")
    n = W.shape[0]
    current = W.copy()
    levels: list[tuple[int, np.ndarray]] = []
    step = 1
    while step < n:
        levels.append((step, current))
        new = np.empty(current.shape)
        new[:step] = current[:step]
        np.matmul(current[:-step], current[step:], out=new[step:])
        current = new
        step *= 2
    return current, levels


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
