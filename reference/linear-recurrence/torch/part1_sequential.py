"""Part 1, torch reference: the linear recurrence, one step at a time."""

from __future__ import annotations

import torch


def check_shapes(a: torch.Tensor, b: torch.Tensor, h0: torch.Tensor) -> None:
    """ValueError unless a and b are both (T, D) and h0 is (D,)."""
    if a.ndim != 2:
        raise ValueError(f"a must have shape (T, D), got {tuple(a.shape)}")
    if b.shape != a.shape:
        raise ValueError(f"b must have a's shape {tuple(a.shape)}, got {tuple(b.shape)}")
    if h0.shape != (a.shape[1],):
        raise ValueError(f"h0 must have shape ({a.shape[1]},), got {tuple(h0.shape)}")


def linear_recurrence(a: torch.Tensor, b: torch.Tensor, h0: torch.Tensor) -> torch.Tensor:
    """h[t] = a[t] * h[t-1] + b[t] for t = 0 .. T-1, with h[-1] = h0, channel by channel."""
    check_shapes(a, b, h0)
    states = []
    state = h0
    for t in range(a.shape[0]):
        state = a[t] * state + b[t]
        states.append(state)
    if not states:
        return torch.empty_like(b)
    h = torch.stack(states)
    return h
