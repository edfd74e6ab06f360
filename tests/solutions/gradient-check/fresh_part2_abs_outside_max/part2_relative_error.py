"""Part 2, torch reference: the worst per-entry relative error, defined where both are 0."""

from __future__ import annotations

import torch


def relative_error(a: torch.Tensor, b: torch.Tensor) -> float:
    """max over entries of |a - b| / max(|a|, |b|, tiny), as a Python float.

    tiny is the dtype's smallest normal number: where a and b are both 0 the entry is 0 / tiny
    = 0 instead of 0 / 0 = nan, and no entry with a normal value is changed by the guard.
    Computed in float64; a NaN anywhere stays NaN (torch.max propagates it); empty tensors give
    0.0.
    """
    if a.shape != b.shape:
        raise ValueError(f"a and b must have the same shape, got {tuple(a.shape)} and "
                         f"{tuple(b.shape)}")
    if a.numel() == 0:
        return 0.0
    tiny = torch.finfo(torch.promote_types(a.dtype, b.dtype)).tiny
    a64, b64 = a.detach().double(), b.detach().double()
    scale = torch.clamp(torch.maximum(a64, b64).abs(), min=tiny)
    return float(((a64 - b64).abs() / scale).max())
