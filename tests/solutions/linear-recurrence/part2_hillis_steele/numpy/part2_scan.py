"""Part 2 (Hillis-Steele: right values, O(T log T) work)."""

from __future__ import annotations

import numpy as np


def combine(left, right):
    a1, b1 = left
    a2, b2 = right
    return a1 * a2, a2 * b1 + b2


def scan_recurrence(a, b, h0):
    if a.ndim != 2 or b.shape != a.shape or h0.shape != (a.shape[1],):
        raise ValueError("shapes")
    A, B = a.copy(), b.copy()
    step = 1
    while step < a.shape[0]:
        newA, newB = A.copy(), B.copy()
        newA[step:], newB[step:] = combine((A[:-step], B[:-step]), (A[step:], B[step:]))
        A, B = newA, newB
        step *= 2
    return A * h0 + B
