"""Part 3: the backward of the recurrence by hand, as a reverse scan (dh left in its order).

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
    """(da, db, dh0) of the loss whose gradient with respect to each h[t] is dh[t]."""
    if a.ndim != 2:
        raise ValueError(f"a must have shape (T, D), got {tuple(a.shape)}")
    if h0.shape != (a.shape[1],):
        raise ValueError(f"h0 must have shape ({a.shape[1]},), got {tuple(h0.shape)}")
    if h.shape != a.shape or dh.shape != a.shape:
        raise ValueError(f"h and dh must have a's shape {tuple(a.shape)}, got "
                         f"{tuple(h.shape)}, {tuple(dh.shape)}")
    if a.shape[0] == 0:
        return torch.zeros_like(a), torch.zeros_like(a), torch.zeros_like(h0)
    carry = torch.zeros_like(a)
    carry[:-1] = a[1:]
    rev_a = carry.flip(0)
    g = scan_recurrence(rev_a, dh, torch.zeros_like(h0)).flip(0)
    h_before = torch.cat([h0[None], h[:-1]])
    da = g * h_before
    db = g.clone()
    dh0 = a[0] * g[0]
    return da, db, dh0
