"""Part 3 (right values, but the adjoint is a sequential loop from T-1 down)."""

from __future__ import annotations

import numpy as np


def recurrence_backward(a, h0, h, dh):
    if a.ndim != 2 or h0.shape != (a.shape[1],) or h.shape != a.shape or dh.shape != a.shape:
        raise ValueError("shapes")
    g = np.zeros_like(a)
    carry = np.zeros_like(h0)
    for t in range(a.shape[0] - 1, -1, -1):
        carry = dh[t] + carry
        g[t] = carry
        carry = a[t] * carry
    before = np.concatenate([h0[None], h[:-1]])
    return g * before, g * 1, carry
