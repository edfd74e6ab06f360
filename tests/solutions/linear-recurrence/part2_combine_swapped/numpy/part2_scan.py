"""Part 2 (combine composed the wrong way round)."""

from __future__ import annotations

import numpy as np


def combine(left, right):
    a1, b1 = left
    a2, b2 = right
    return a1 * a2, a1 * b2 + b1


def scan_recurrence(a, b, h0):
    if a.ndim != 2 or b.shape != a.shape or h0.shape != (a.shape[1],):
        raise ValueError("shapes")
    t = a.shape[0]
    if t == 0:
        return b.copy()
    size = 1 << (t - 1).bit_length()
    A = np.ones((size, a.shape[1]), dtype=a.dtype)
    B = np.zeros((size, a.shape[1]), dtype=b.dtype)
    A[:t] = a
    B[:t] = b
    step = 1
    while step < size:
        L = slice(step - 1, size, 2 * step)
        R = slice(2 * step - 1, size, 2 * step)
        A[R], B[R] = combine((A[L], B[L]), (A[R], B[R]))
        step *= 2
    A[size - 1] = 1
    B[size - 1] = 0
    step = size // 2
    while step >= 1:
        L = slice(step - 1, size, 2 * step)
        R = slice(2 * step - 1, size, 2 * step)
        saved = (A[L].copy(), B[L].copy())
        A[L] = A[R]
        B[L] = B[R]
        A[R], B[R] = combine((A[R], B[R]), saved)
        step //= 2
    pa, pb = combine((A[:t], B[:t]), (a, b))
    return pa * h0 + pb
