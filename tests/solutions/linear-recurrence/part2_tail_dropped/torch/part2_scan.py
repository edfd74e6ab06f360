"""Part 2 (tail dropped)."""

from __future__ import annotations

import torch


def combine(left, right):
    a1, b1 = left
    a2, b2 = right
    return a1 * a2, a2 * b1 + b2


def scan_recurrence(a, b, h0):
    if a.ndim != 2 or b.shape != a.shape or h0.shape != (a.shape[1],):
        raise ValueError("shapes")
    t = a.shape[0]
    if t == 0:
        return b.clone()
    size = 1 << (t.bit_length() - 1)
    A = torch.ones((size, a.shape[1]), dtype=a.dtype)
    B = torch.zeros((size, a.shape[1]), dtype=b.dtype)
    A[:] = a[:size]
    B[:] = b[:size]
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
        saved = (A[L].clone(), B[L].clone())
        A[L] = A[R]
        B[L] = B[R]
        A[R], B[R] = combine((A[R], B[R]), saved)
        step //= 2
    pa, pb = combine((A, B), (a[:size], b[:size]))
    h = b * 0
    h[:size] = pa * h0 + pb
    return h
