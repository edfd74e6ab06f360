"""Part 2, numpy reference: the worst per-entry relative error, defined where both are 0."""

from __future__ import annotations

import numpy as np


def relative_error(a: np.ndarray, b: np.ndarray) -> float:
    """max over entries of |a - b| / max(|a|, |b|, tiny), as a Python float.

    tiny is the dtype's smallest normal number: where a and b are both 0 the entry is 0 / tiny
    = 0 instead of 0 / 0 = nan, and no entry with a normal value is changed by the guard (a
    guard like 1e-8 would turn a = 1e-30, b = 0 from 100% wrong into 1e-22). Computed in
    float64; a NaN anywhere stays NaN (np.max propagates it); empty arrays give 0.0.
    """
    a, b = np.asarray(a), np.asarray(b)
    if a.shape != b.shape:
        raise ValueError(f"a and b must have the same shape, got {a.shape} and {b.shape}")
    if a.size == 0:
        return 0.0
    tiny = np.finfo(np.result_type(a.dtype, b.dtype, np.float32)).tiny
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    scale = np.maximum(np.abs(a64), np.abs(b64), tiny)
    return float(np.max(np.abs(a64 - b64) / scale))
