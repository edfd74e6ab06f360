"""Part 1, numpy reference: the linear recurrence, one step at a time."""

from __future__ import annotations

from itertools import accumulate

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
    check_shapes(a, b, h0)
    if a.shape[0] == 0:
        return np.empty_like(b)
    states = accumulate(zip(a, b), lambda s, ab: ab[0] * s + ab[1], initial=h0)
    next(states)  # skip h0 itself
    return np.stack(list(states)).astype(b.dtype, copy=False)
