"""Buggy: each entry is divided by |b| alone (clamped at tiny) instead of max(|a|, |b|), so the error is asymmetric and explodes where b is 0."""

from __future__ import annotations

import torch


def relative_error(a: torch.Tensor, b: torch.Tensor) -> float:
    """Largest entrywise relative difference between a and b, as a Python float."""
    if a.shape != b.shape:
        raise ValueError(f"shapes differ: {tuple(a.shape)} vs {tuple(b.shape)}")
    if a.numel() == 0:
        return 0.0
    tiny = torch.finfo(torch.promote_types(a.dtype, b.dtype)).tiny
    a64 = a.detach().double()
    b64 = b.detach().double()
    rel = (a64 - b64).abs() / b64.abs().clamp_min(tiny)
    return float(rel.max())
