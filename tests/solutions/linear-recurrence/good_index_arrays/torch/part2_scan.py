"""Part 2, correct: h0 rides along as a first map x -> h0 (the pair (0, h0)), the levels are
addressed with index arrays, and the tree is padded at the end with the identity."""

from __future__ import annotations

import torch


def combine(left, right):
    first_a, first_b = left
    then_a, then_b = right
    return first_a * then_a, first_b * then_a + then_b


def scan_recurrence(a, b, h0):
    if a.ndim != 2 or b.shape != a.shape or h0.shape != (a.shape[1],):
        raise ValueError("a, b must be (T, D) and h0 (D,)")
    n = a.shape[0] + 1
    size = 1
    while size < n:
        size *= 2
    maps_a = torch.cat([torch.zeros((1, a.shape[1]), dtype=a.dtype), a,
                             torch.ones((size - n, a.shape[1]), dtype=a.dtype)])
    maps_b = torch.cat([h0[None], b, torch.zeros((size - n, a.shape[1]), dtype=b.dtype)])
    inclusive_a, inclusive_b = maps_a.clone(), maps_b.clone()
    width = 1
    while width < size:
        right = torch.arange(2 * width - 1, size, 2 * width)
        left = right - width
        maps_a[right], maps_b[right] = combine((maps_a[left], maps_b[left]),
                                               (maps_a[right], maps_b[right]))
        width *= 2
    maps_a[-1], maps_b[-1] = 1.0, 0.0
    while width > 1:
        width //= 2
        right = torch.arange(2 * width - 1, size, 2 * width)
        left = right - width
        old_a, old_b = maps_a[left], maps_b[left]
        maps_a[left], maps_b[left] = maps_a[right], maps_b[right]
        maps_a[right], maps_b[right] = combine((maps_a[right], maps_b[right]), (old_a, old_b))
    _, states = combine((maps_a[:n], maps_b[:n]), (inclusive_a[:n], inclusive_b[:n]))
    return states[1:]
