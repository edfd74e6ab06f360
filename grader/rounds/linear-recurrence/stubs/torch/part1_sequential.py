"""Part 1: the linear recurrence, one step at a time (torch flavor).

The recurrence of linear RNNs and state-space models, elementwise over D channels:

    h[t] = a[t] * h[t-1] + b[t]     for t = 0 .. T-1, with h[-1] = h0

Run `grader check part1` to grade this file; `grader hint part1` when stuck.
"""

from __future__ import annotations

import torch


def linear_recurrence(a: torch.Tensor, b: torch.Tensor, h0: torch.Tensor) -> torch.Tensor:
    """Return h of shape (T, D), a new tensor with h[t] = a[t] * h[t-1] + b[t] and h[-1] = h0.

    a, b: (T, D); h0: (D,). Raises ValueError unless a.ndim == 2, b.shape == a.shape and
    h0.shape == (D,). T == 0 is allowed and returns an empty (0, D) result. Do not modify a, b
    or h0; the result shares no memory with them and has their dtype.
    """
    raise NotImplementedError("Part 1: write linear_recurrence")
