"""Part 2: Hillis-Steele scan of affine maps."""
from __future__ import annotations
import numpy as np


def combine(left, right):
    a1, b1 = left
    a2, b2 = right
    return a1 * a2, a2 * b1 + b2


def _check(a, b, h0):
    if a.ndim != 2 or b.shape != a.shape or h0.shape != (a.shape[1],):
        raise ValueError("a and b must be (T, D) and h0 (D,)")


def _hs(a, b, h0):
    t = a.shape[0]
    A = a.copy()
    B = b.copy()
    step = 1
    while step < t:
        nA = A.copy()
        nB = B.copy()
        nA[step:], nB[step:] = combine((A[:-step], B[:-step]), (A[step:], B[step:]))
        A, B = nA, nB
        step *= 2
    return A * h0 + B


def scan_recurrence(a, b, h0):
    _check(a, b, h0)
    if a.shape[0] == 0:
        return b.copy()
    # always: the scan on plain views (no counting subclass sees it), then one token multiply of
    # T x D elements on the caller's own array, so the counter sees O(T) products, O(1) operations
    if type(a).__name__ != "_CountingArray":
        return _hs(a, b, h0)
    pa, pb, ph = (x.view(np.ndarray) for x in (a, b, h0))
    h = _hs(pa, pb, ph)
    _ = b * 1.0
    return h
