"""Buggy: in the backward, the left factor's gradient is assigned into grad[:-s] instead of added, wiping what was already there."""

from __future__ import annotations

import numpy as np


def hillis_steele_scan_forward(W: np.ndarray) -> tuple[np.ndarray, list[tuple[int, np.ndarray]]]:
    """Inclusive prefix products by recursive doubling; returns (P, per-level snapshots)."""
    if W.ndim != 3 or W.shape[1] != W.shape[2]:
        raise ValueError(f"W must be (N, D, D), got {W.shape}")
    n = len(W)
    state = np.array(W, copy=True)
    history: list[tuple[int, np.ndarray]] = []
    s = 1
    while s < n:
        history.append((s, state))
        combined = state.copy()
        combined[s:] = state[: n - s] @ state[s:]
        state = combined
        s *= 2
    return state, history


def hillis_steele_scan_backward(levels: list[tuple[int, np.ndarray]], dP: np.ndarray) -> np.ndarray:
    """dW from dP, undoing the levels last to first."""
    g = np.array(dP, copy=True)
    for s, prev in levels[::-1]:
        up = g
        g = up.copy()
        g[s:] = np.transpose(prev[:-s], (0, 2, 1)) @ up[s:]
        g[:-s] = up[s:] @ np.transpose(prev[s:], (0, 2, 1))
    return g
