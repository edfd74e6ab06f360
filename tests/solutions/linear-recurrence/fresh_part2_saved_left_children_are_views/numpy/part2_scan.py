"""Part 2: the recurrence as a Blelloch scan of affine maps (numpy)."""

from __future__ import annotations

import numpy as np


def combine(left: tuple[np.ndarray, np.ndarray],
            right: tuple[np.ndarray, np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """x -> a2 * (a1 * x + b1) + b2: first `left`, then `right`."""
    a1, b1 = left
    a2, b2 = right
    return a1 * a2, a2 * b1 + b2


def scan_recurrence(a: np.ndarray, b: np.ndarray, h0: np.ndarray) -> np.ndarray:
    if a.ndim != 2 or b.shape != a.shape or h0.shape != (a.shape[1],):
        raise ValueError(f"bad shapes {a.shape}, {b.shape}, {h0.shape}")
    T, D = a.shape
    if T == 0:
        return b.copy()
    n = 1 << (T - 1).bit_length()
    M = np.ones((n, D), dtype=a.dtype)
    C = np.zeros((n, D), dtype=b.dtype)
    M[:T] = a
    C[:T] = b
    s = 1
    while s < n:
        L = slice(s - 1, n, 2 * s)
        R = slice(2 * s - 1, n, 2 * s)
        M[R], C[R] = combine((M[L], C[L]), (M[R], C[R]))
        s *= 2
    M[-1] = 1
    C[-1] = 0
    s = n // 2
    while s >= 1:
        L = slice(s - 1, n, 2 * s)
        R = slice(2 * s - 1, n, 2 * s)
        left_m, left_c = M[L], C[L]
        M[L], C[L] = M[R], C[R]
        M[R], C[R] = combine((M[R], C[R]), (left_m, left_c))
        s //= 2
    pm, pc = combine((M[:T], C[:T]), (a, b))
    return pm * h0 + pc
