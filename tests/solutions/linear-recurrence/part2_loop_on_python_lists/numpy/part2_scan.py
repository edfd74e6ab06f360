"""A sequential loop, run on Python lists so that no array operation, and no product, is seen:
the depth probe follows nothing, which measures nothing."""

from __future__ import annotations

import numpy as np


def combine(left, right):
    a1, b1 = left
    a2, b2 = right
    return a1 * a2, a2 * b1 + b2


def scan_recurrence(a, b, h0):
    if a.ndim != 2 or b.shape != a.shape or h0.shape != (a.shape[1],):
        raise ValueError("a and b must be (T, D) and h0 (D,)")
    state = [float(v) for v in np.asarray(h0).tolist()]
    rows = []
    for a_row, b_row in zip(np.asarray(a).tolist(), np.asarray(b).tolist()):
        state = [x * s + y for x, s, y in zip(a_row, state, b_row)]
        rows.append(state)
    return np.array(rows, dtype=a.dtype).reshape(a.shape)
