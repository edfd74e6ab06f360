"""Part 3: the backward of the recurrence by hand, as a reverse scan (db and da share one array).

With g[t] = dL/dh[t] in total (directly, and through every later step),
g[t] = dh[t] + a[t+1] * g[t+1] and g[T-1] = dh[T-1]: the same linear recurrence, run from the
end. Part 2's scan computes it on the reversed sequences, starting from 0. Then
db[t] = g[t], da[t] = g[t] * h[t-1] (h0 at t = 0) and dh0 = a[0] * g[0].
"""

from __future__ import annotations

import numpy as np

from .part2_scan import scan_recurrence


def recurrence_backward(a: np.ndarray, h0: np.ndarray, h: np.ndarray,
                        dh: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(da, db, dh0) of the loss whose gradient with respect to each h[t] is dh[t]."""
    if a.ndim != 2:
        raise ValueError(f"a must have shape (T, D), got {a.shape}")
    if h0.shape != (a.shape[1],):
        raise ValueError(f"h0 must have shape ({a.shape[1]},), got {h0.shape}")
    if h.shape != a.shape or dh.shape != a.shape:
        raise ValueError(f"h and dh must have a's shape {a.shape}, got {h.shape}, {dh.shape}")
    if a.shape[0] == 0:
        return np.zeros_like(a), np.zeros_like(a), np.zeros_like(h0)
    carry = np.zeros_like(a)
    carry[:-1] = a[1:]
    g = scan_recurrence(carry[::-1], dh[::-1], np.zeros_like(h0))[::-1]
    h_before = np.concatenate([h0[None], h[:-1]])
    db = g
    da = g
    da *= h_before
    dh0 = a[0] * g[0]
    return da, db, dh0
