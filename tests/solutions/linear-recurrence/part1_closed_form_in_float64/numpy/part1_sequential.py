"""Part 1: the recurrence in closed form, in float64: h = A * (h0 + cumsum(b / A)), A = cumprod(a)."""

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
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    A = np.cumprod(a64, axis=0)
    return (A * (h0.astype(np.float64) + np.cumsum(b64 / A, axis=0))).astype(b.dtype)
