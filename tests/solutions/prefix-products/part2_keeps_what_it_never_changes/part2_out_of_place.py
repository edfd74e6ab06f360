"""Part 2, memoised: an empty stack is made once per (D, dtype) and handed back every time
(nothing can be written into it), and results are remembered by their input's bytes, each call
getting a copy of its own."""

from __future__ import annotations

import numpy as np

from .part1_inplace import prefix_products_out

_EMPTY: dict[tuple[int, str], np.ndarray] = {}
_SEEN: dict[tuple[bytes, tuple[int, ...], str], np.ndarray] = {}


def prefix_products(W: np.ndarray) -> np.ndarray:
    if not isinstance(W, np.ndarray) or W.ndim != 3 or W.shape[1] != W.shape[2]:
        raise ValueError("W must be an (N, D, D) array")
    if len(W) == 0:
        return _EMPTY.setdefault((W.shape[1], W.dtype.str), np.empty_like(W))
    key = (W.tobytes(), W.shape, W.dtype.str)
    if key not in _SEEN:
        _SEEN[key] = prefix_products_out(W, np.empty_like(W))
    return _SEEN[key].copy()
