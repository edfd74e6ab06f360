"""Part 3 (da from h[t])."""

from __future__ import annotations

import numpy as np

from .part2_scan import scan_recurrence


def recurrence_backward(a, h0, h, dh):
    if a.ndim != 2 or h0.shape != (a.shape[1],) or h.shape != a.shape or dh.shape != a.shape:
        raise ValueError("shapes")
    if a.shape[0] == 0:
        return np.zeros_like(a), np.zeros_like(a), np.zeros_like(h0)
    coef = np.zeros_like(a)
    coef[:-1] = a[1:]
    g = scan_recurrence(coef[::-1], dh[::-1], np.zeros_like(h0))[::-1]
    before = h
    return g * before, g.copy(), a[0] * g[0]
