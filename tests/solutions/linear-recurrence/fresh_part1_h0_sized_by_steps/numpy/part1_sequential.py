"""Part 1: the recurrence, with its shapes checked in a helper of its own."""

from __future__ import annotations

import numpy as np


def check_shapes(a, b, h0):
    if a.ndim != 2:
        raise ValueError("a must be (T, D)")
    steps, width = a.shape
    if b.shape != (steps, width):
        raise ValueError("b must be (T, D)")
    if h0.shape != (steps,):
        raise ValueError("h0 must be (D,)")


def linear_recurrence(a, b, h0):
    check_shapes(a, b, h0)
    out = np.empty_like(b)
    h = h0
    for t in range(len(a)):
        h = a[t] * h + b[t]
        out[t] = h
    return out
