"""Part 3, correct: the adjoint as the forward scan of reversed index order, shifts by
indexing, dh0 read off an extra leading step."""

from __future__ import annotations

import numpy as np

from .part2_scan import scan_recurrence


def recurrence_backward(a, h0, h, dh):
    if a.ndim != 2 or h0.shape != (a.shape[1],) or h.shape != a.shape or dh.shape != a.shape:
        raise ValueError("a, h, dh must be (T, D) and h0 (D,)")
    steps = a.shape[0]
    order = np.arange(steps - 1, -1, -1)
    coefficient = np.concatenate([a[1:], np.zeros_like(a[:1])])
    adjoint = scan_recurrence(coefficient[order], dh[order], np.zeros_like(h0))[order]
    previous = np.concatenate([h0[None], h])[:steps]
    dh0 = np.sum(a[:1] * adjoint[:1], axis=0) if steps else np.zeros_like(h0)
    return adjoint * previous, adjoint + 0.0, dh0
