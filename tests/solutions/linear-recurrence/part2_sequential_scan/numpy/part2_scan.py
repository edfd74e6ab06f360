"""Part 2 (combine in a sequential loop: a chain of T steps)."""

from __future__ import annotations

import numpy as np


def combine(left, right):
    a1, b1 = left
    a2, b2 = right
    return a1 * a2, a2 * b1 + b2


def scan_recurrence(a, b, h0):
    if a.ndim != 2 or b.shape != a.shape or h0.shape != (a.shape[1],):
        raise ValueError("shapes")
    h = np.empty_like(b)
    total = (np.ones_like(h0), np.zeros_like(h0))
    for t in range(a.shape[0]):
        total = combine(total, (a[t], b[t]))
        h[t] = total[0] * h0 + total[1]
    return h
