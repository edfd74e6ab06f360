import numpy as np
from exercises.part2_scan import scan_recurrence


def recurrence_backward(a, h0, h, dh):
    if a.ndim != 2:
        raise ValueError("a must be (T, D)")
    if h0.shape != (a.shape[1],):
        raise ValueError("h0 must be (D,)")
    if h.shape != a.shape or dh.shape != a.shape:
        raise ValueError("h, dh must be (T, D)")
    if len(a) == 0:
        return np.zeros_like(a), np.zeros_like(a), np.zeros_like(h0)
    a_rev = a[::-1]
    # reversed step s uses a[t+1] = a_rev[s-1]
    coef = np.roll(a_rev, -1, axis=0)
    g_rev = scan_recurrence(coef, dh[::-1], np.zeros_like(h0))
    g = g_rev[::-1]
    h_prev = np.roll(h, 1, axis=0)
    h_prev[0] = h0
    return g * h_prev, g.copy(), a[0] * g[0]
