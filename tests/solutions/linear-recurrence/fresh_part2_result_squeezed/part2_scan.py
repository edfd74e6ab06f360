"""Part 2, torch reference: the recurrence as a work-efficient (Blelloch) scan of affine maps.

Step t is the map x -> a[t] * x + b[t], the pair (a[t], b[t]). Composing two maps gives another
(an associative operator, not a commutative one), so every prefix map can be found by a scan:
an up-sweep that builds a tree of partial compositions, then a down-sweep that hands each slot
the composition of everything before it. Each level is one batched operation on half as many
pairs as the level below: O(T) work in O(log T) levels.
"""

from __future__ import annotations

import torch


def combine(left: tuple[torch.Tensor, torch.Tensor],
            right: tuple[torch.Tensor, torch.Tensor]) -> tuple[torch.Tensor, torch.Tensor]:
    """The map `left` then the map `right`: x -> a2 * (a1 * x + b1) + b2."""
    a1, b1 = left
    a2, b2 = right
    a = a1 * a2
    b = a2 * b1 + b2
    return a, b


def scan_recurrence(a: torch.Tensor, b: torch.Tensor, h0: torch.Tensor) -> torch.Tensor:
    """Part 1's h, by an up-sweep and a down-sweep over a tree padded to a power of two."""
    if a.ndim != 2 or b.shape != a.shape or h0.shape != (a.shape[1],):
        raise ValueError("a and b must be (T, D) and h0 (D,), got "
                         f"{tuple(a.shape)}, {tuple(b.shape)}, {tuple(h0.shape)}")
    t = a.shape[0]
    if t == 0:
        return b.clone()
    size = 1 << (t - 1).bit_length()
    A = torch.ones((size, a.shape[1]), dtype=a.dtype, device=a.device)
    B = torch.zeros((size, a.shape[1]), dtype=b.dtype, device=b.device)
    A[:t] = a
    B[:t] = b
    step = 1
    while step < size:
        left = slice(step - 1, size, 2 * step)
        right = slice(2 * step - 1, size, 2 * step)
        A[right], B[right] = combine((A[left], B[left]), (A[right], B[right]))
        step *= 2
    A[size - 1] = 1
    B[size - 1] = 0
    step = size // 2
    while step >= 1:
        left = slice(step - 1, size, 2 * step)
        right = slice(2 * step - 1, size, 2 * step)
        before_a = A[left].clone()
        before_b = B[left].clone()
        A[left] = A[right]
        B[left] = B[right]
        A[right], B[right] = combine((A[right], B[right]), (before_a, before_b))
        step //= 2
    prefix_a, prefix_b = combine((A[:t], B[:t]), (a, b))
    return (prefix_a * h0 + prefix_b).squeeze()
