"""Part 2: the relative error between two arrays, e.g. an analytic and a numerical gradient
(numpy flavor).

    relative_error(a, b) = max over entries of |a - b| / max(|a|, |b|, tiny)

Run `grader check part2` to grade this file; `grader hint part2` when stuck.
"""

from __future__ import annotations

import numpy as np


def relative_error(a: np.ndarray, b: np.ndarray) -> float:
    """Return the worst per-entry relative error of a against b, as a Python float.

    a, b: floating-point arrays of the same shape (any shape, 0-d included) and dtype.
    tiny: the dtype's smallest positive normal number (np.finfo(dtype).tiny), so an entry
          where a and b are both 0 counts as 0, never as 0 / 0 = nan; it changes no other
          entry.

    - Symmetric (relative_error(a, b) == relative_error(b, a)) and scale-free (multiplying
      a and b by the same nonzero factor changes nothing).
    - A NaN in a or b makes the result NaN: a NaN gradient must never pass a check.
    - Empty arrays: 0.0.
    - Raise ValueError when a and b do not have the same shape (no broadcasting).
    - a and b are unchanged afterwards.
    """
    raise NotImplementedError("Part 2: write relative_error")
