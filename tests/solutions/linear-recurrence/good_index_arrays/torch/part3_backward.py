"""Part 3, correct: the adjoint as the forward scan of reversed index order, shifts by
indexing, dh0 read off an extra leading step."""

from __future__ import annotations

import torch

from .part2_scan import scan_recurrence


def recurrence_backward(a, h0, h, dh):
    if a.ndim != 2 or h0.shape != (a.shape[1],) or h.shape != a.shape or dh.shape != a.shape:
        raise ValueError("a, h, dh must be (T, D) and h0 (D,)")
    steps = a.shape[0]
    order = torch.arange(steps - 1, -1, -1)
    coefficient = torch.cat([a[1:], torch.zeros_like(a[:1])])
    adjoint = scan_recurrence(coefficient[order], dh[order], torch.zeros_like(h0))[order]
    previous = torch.cat([h0[None], h])[:steps]
    dh0 = torch.sum(a[:1] * adjoint[:1], dim=0) if steps else torch.zeros_like(h0)
    return adjoint * previous, adjoint + 0.0, dh0
