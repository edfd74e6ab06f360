"""Dtype-aware comparison of a candidate's array against the truth, with evidence to show."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

# (rtol, atol) per dtype. atol is scaled by the size of the expected values.
TOLERANCES: dict[str, tuple[float, float]] = {
    "float64": (1e-7, 1e-9),
    "float32": (2e-3, 2e-4),
    "float16": (2e-2, 2e-2),
}


@dataclass(frozen=True)
class Mismatch:
    """The evidence for a wrong result: the first bad entry and the worst errors."""

    index: tuple[int, ...]
    yours: float
    expected: float
    max_abs: float
    max_rel: float

    def describe(self, name: str) -> str:
        where = ", ".join(str(i) for i in self.index)
        return (
            f"first wrong entry {name}[{where}]: yours {self.yours:.6g}, expected "
            f"{self.expected:.6g}; max abs error {self.max_abs:.3g}, max rel error "
            f"{self.max_rel:.3g}"
        )


def close_mask(actual: np.ndarray, expected: np.ndarray, dtype: str,
               tolerance: tuple[float, float] | None = None,
               alike: bool = False) -> np.ndarray:
    """Elementwise closeness; expected is computed in float64.

    Against the truth a NaN or an infinity is never close. With `alike` (two computations
    compared with each other: a run and its repeat, a result and what a slip computes) an
    entry that is not finite in `expected` is close where `actual` holds the same: NaN for
    NaN, an infinity of the same sign; code that makes a NaN makes it each time.
    `tolerance` (rtol, atol) overrides the dtype's, e.g. for finite-difference estimates.
    """
    rtol, atol = tolerance or TOLERANCES.get(dtype, TOLERANCES["float32"])
    finite = np.isfinite(expected)
    scale = max(1.0, float(np.max(np.abs(expected[finite]))) if finite.any() else 1.0)
    a = actual.astype(np.float64)
    with np.errstate(invalid="ignore", over="ignore"):
        ok = np.abs(a - expected) <= atol * scale + rtol * np.abs(expected)
    ok &= np.isfinite(a)
    if alike:
        ok |= ~finite & ((np.isnan(a) & np.isnan(expected)) | (a == expected))
    return np.asarray(ok, dtype=bool)


def find_mismatch(actual: np.ndarray, expected: np.ndarray, dtype: str,
                  tolerance: tuple[float, float] | None = None,
                  alike: bool = False) -> Mismatch | None:
    """None when actual matches expected (same shape assumed); else the evidence."""
    ok = close_mask(actual, expected, dtype, tolerance, alike)
    if ok.all():
        return None
    bad = np.argwhere(~ok)
    first = tuple(int(i) for i in bad[0])
    a = actual.astype(np.float64)
    with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
        diff = np.abs(a - expected)
        rel = diff / np.maximum(np.abs(expected), np.finfo(np.float64).tiny)
    # An entry that is not finite but matches (alike) is no error; one that does not match
    # is an infinite one.
    counted = ~ok | np.isfinite(diff)
    finite = np.isfinite(diff[counted])
    max_abs = float(diff[counted].max()) if finite.all() else float("inf")
    max_rel = float(rel[counted].max()) if finite.all() else float("inf")
    return Mismatch(first, float(a[first]), float(expected[first]), max_abs, max_rel)


def matches(actual: np.ndarray, expected: np.ndarray, dtype: str) -> bool:
    return actual.shape == expected.shape and bool(close_mask(actual, expected, dtype).all())


def _is_number(x: Any) -> bool:
    return isinstance(x, int | float | np.floating | np.integer) and not isinstance(x, bool)


def tree_difference(actual: Any, expected: Any, dtype: str, name: str,
                    tolerance: tuple[float, float] | None = None,
                    alike: bool = False, evidence: bool = True) -> str | None:
    """None when a result matches the truth (or, with `alike`, another computation: see
    close_mask); else what differs first, in words.

    Results may be arrays, numbers, or lists and dicts of them (a tuple of gradients, a dict
    of parameters); `name` names the whole, and each piece is named below it (dW1, P[0, 1]).
    Without `evidence`, arrays that differ in values are only said to differ (tree_matches
    asks thousands of times whether a slip reproduces a result: the first wrong entry and the
    worst errors would be thrown away)."""
    if isinstance(expected, dict):
        if not isinstance(actual, dict):
            return f"{name} should be a dict with keys {sorted(expected)}"
        missing = sorted(set(expected) - set(actual))
        if missing:
            return f"{name} has no key(s) {', '.join(missing)}"
        for key in expected:
            found = tree_difference(actual[key], expected[key], dtype, key, tolerance, alike,
                                    evidence)
            if found:
                return found
        return None
    if isinstance(expected, list | tuple):
        if not isinstance(actual, list | tuple) or len(actual) != len(expected):
            return f"{name} should be a sequence of {len(expected)} items"
        for index, (a, e) in enumerate(zip(actual, expected, strict=True)):
            found = tree_difference(a, e, dtype, f"{name}[{index}]", tolerance, alike,
                                    evidence)
            if found:
                return found
        return None
    if _is_number(expected) and not isinstance(actual, np.ndarray):
        if not _is_number(actual):
            return f"{name} should be a number, got {type(actual).__name__}"
        actual = np.asarray(float(actual))
    if not isinstance(actual, np.ndarray):
        return f"{name} should be an array, got {type(actual).__name__}"
    expected = np.asarray(expected, dtype=np.float64)
    if actual.shape != expected.shape:
        return f"{name} has shape {tuple(actual.shape)}, expected {tuple(expected.shape)}"
    if not evidence:
        close = close_mask(actual, expected, dtype, tolerance, alike).all()
        return None if close else f"{name} differs"
    mismatch = find_mismatch(actual, expected, dtype, tolerance, alike)
    if mismatch is None:
        return None
    if actual.ndim == 0:
        return f"{name}: yours {mismatch.yours:.6g}, expected {mismatch.expected:.6g}"
    return mismatch.describe(name)


def tree_matches(actual: Any, expected: Any, dtype: str,
                 tolerance: tuple[float, float] | None = None, alike: bool = False) -> bool:
    with np.errstate(all="ignore"):
        return tree_difference(actual, expected, dtype, "result", tolerance, alike,
                               evidence=False) is None
