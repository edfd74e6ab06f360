"""Buggy: the maximum is taken with np.nanmax, so a NaN entry is skipped instead of making the result NaN."""

from __future__ import annotations

import numpy as np


def relative_error(a: np.ndarray, b: np.ndarray) -> float:
    """Largest entrywise |a - b| / max(|a|, |b|), as a Python float."""
    a = np.asarray(a)
    b = np.asarray(b)
    if a.shape != b.shape:
        raise ValueError(f"shapes differ: {a.shape} vs {b.shape}")
    if a.size == 0:
        return 0.0
    floor = np.finfo(np.result_type(a, b, np.float32)).tiny
    x = np.asarray(a, dtype=np.float64)
    y = np.asarray(b, dtype=np.float64)
    denom = np.fmax(np.fmax(np.abs(x), np.abs(y)), floor)
    with np.errstate(invalid="ignore"):
        ratio = np.abs(x - y) / denom
    if np.all(np.isnan(ratio)):
        return float("nan")
    return float(np.nanmax(ratio))
