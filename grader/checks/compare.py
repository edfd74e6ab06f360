"""Dtype-aware comparison of a candidate's array against the truth, with evidence to show."""

from __future__ import annotations

from dataclasses import dataclass

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
               tolerance: tuple[float, float] | None = None) -> np.ndarray:
    """Elementwise closeness, NaN never close; expected is computed in float64.

    `tolerance` (rtol, atol) overrides the dtype's, e.g. for finite-difference estimates.
    """
    rtol, atol = tolerance or TOLERANCES.get(dtype, TOLERANCES["float32"])
    scale = max(1.0, float(np.max(np.abs(expected))) if expected.size else 1.0)
    a = actual.astype(np.float64)
    with np.errstate(invalid="ignore", over="ignore"):
        ok = np.abs(a - expected) <= atol * scale + rtol * np.abs(expected)
    return ok & np.isfinite(a)


def find_mismatch(actual: np.ndarray, expected: np.ndarray, dtype: str,
                  tolerance: tuple[float, float] | None = None) -> Mismatch | None:
    """None when actual matches expected (same shape assumed); else the evidence."""
    ok = close_mask(actual, expected, dtype, tolerance)
    if ok.all():
        return None
    bad = np.argwhere(~ok)
    first = tuple(int(i) for i in bad[0])
    a = actual.astype(np.float64)
    with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
        diff = np.abs(a - expected)
        rel = diff / np.maximum(np.abs(expected), np.finfo(np.float64).tiny)
    finite = np.isfinite(diff)
    max_abs = float(diff.max()) if finite.all() else float("inf")
    max_rel = float(rel.max()) if finite.all() else float("inf")
    return Mismatch(first, float(a[first]), float(expected[first]), max_abs, max_rel)


def matches(actual: np.ndarray, expected: np.ndarray, dtype: str) -> bool:
    return actual.shape == expected.shape and bool(close_mask(actual, expected, dtype).all())
