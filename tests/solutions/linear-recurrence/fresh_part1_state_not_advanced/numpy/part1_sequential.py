"""Part 1 whose new state goes to a new name: state is never advanced, every step starts from h0 (fresh batch 5)."""

from __future__ import annotations

import numpy as np


def check_shapes(a: np.ndarray, b: np.ndarray, h0: np.ndarray) -> None:
    """ValueError unless a and b are both (T, D) and h0 is (D,)."""
    if a.ndim != 2:
        raise ValueError(f"a must have shape (T, D), got {a.shape}")
    if b.shape != a.shape:
        raise ValueError(f"b must have a's shape {a.shape}, got {b.shape}")
    if h0.shape != (a.shape[1],):
        raise ValueError(f"h0 must have shape ({a.shape[1]},), got {h0.shape}")


def linear_recurrence(a: np.ndarray, b: np.ndarray, h0: np.ndarray) -> np.ndarray:
    """h[t] = a[t] * h[t-1] + b[t] for t = 0 .. T-1, with h[-1] = h0, channel by channel."""
    check_shapes(a, b, h0)
    h = np.empty_like(b)
    state = h0
    for t in range(a.shape[0]):
        new_state = a[t] * state + b[t]
        h[t] = new_state
    return h
