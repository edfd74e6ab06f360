"""Part 3, torch reference: the backward of the recurrence by hand, as a reverse scan.

With g[t] = dL/dh[t] in total (directly, and through every later step),
g[t] = dh[t] + a[t+1] * g[t+1] and g[T-1] = dh[T-1]: the same linear recurrence, run from the
end. Part 2's scan computes it on the reversed sequences, starting from 0. Then
db[t] = g[t], da[t] = g[t] * h[t-1] (h0 at t = 0) and dh0 = a[0] * g[0].
"""

from __future__ import annotations

import torch

from .part2_scan import scan_recurrence


def recurrence_backward(a: torch.Tensor, h0: torch.Tensor, h: torch.Tensor,
                        dh: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    if a.ndim != 2:
        raise ValueError(f"a must have shape (T, D), got {tuple(a.shape)}")
    T, D = a.shape
    if tuple(h0.shape) != (D,):
        raise ValueError(f"h0 must have shape ({D},), got {tuple(h0.shape)}")
    if h.shape != a.shape or dh.shape != a.shape:
        raise ValueError("h and dh must have a's shape")
    if T == 0:
        return a.new_zeros(a.shape), a.new_zeros(a.shape), h0.new_zeros(h0.shape)
    nxt = torch.roll(a, shifts=-1, dims=0)
    nxt[-1] = 0
    rev = torch.flip
    g = rev(scan_recurrence(rev(nxt, (0,)), rev(dh, (0,)), h0.new_zeros(D)), (0,))
    prev = torch.roll(h, shifts=1, dims=0)
    prev[0] = h0
    return g * prev, g.clone(), g[0] * a[0]
