"""Part 3 (coefficient not shifted)."""

from __future__ import annotations

import torch

from .part2_scan import scan_recurrence


def recurrence_backward(a, h0, h, dh):
    if a.ndim != 2 or h0.shape != (a.shape[1],) or h.shape != a.shape or dh.shape != a.shape:
        raise ValueError("shapes")
    if a.shape[0] == 0:
        return torch.zeros_like(a), torch.zeros_like(a), torch.zeros_like(h0)
    coef = a
    g = scan_recurrence(coef.flip(0), dh.flip(0), torch.zeros_like(h0)).flip(0)
    before = torch.cat([h0[None], h[:-1]])
    return g * before, g.clone(), a[0] * g[0]
