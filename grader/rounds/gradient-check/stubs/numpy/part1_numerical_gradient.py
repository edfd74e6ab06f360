"""Part 1: the numerical gradient of a scalar function by central differences (numpy flavor).

    g[i] = (f(x + eps * e_i) - f(x - eps * e_i)) / (2 * eps)      for every index i of x

where e_i is 1 at index i and 0 elsewhere.

Run `grader check part1` to grade this file; `grader hint part1` when stuck.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np


def numerical_gradient(f: Callable[[np.ndarray], float], x: np.ndarray,
                       eps: float = 1e-6) -> np.ndarray:
    """Return g, a new array of x's shape and dtype: the central-difference gradient of f at x.

    f: takes an array of x's shape and dtype, returns a scalar (a float or a numpy scalar).
    x: a floating-point array of any shape (0-d included), possibly a non-contiguous view
       (a transpose, a strided slice).
    eps: the step, a positive finite number.

    - You may perturb x in place, but restore it exactly, bit for bit, after each entry: every
      call of f must see x with at most one entry changed, and x must be exactly as it was
      when you return. (x[i] + eps - eps is not always x[i] in floating point.)
    - Call f exactly 2 * x.size times (none for an empty x).
    - Raise ValueError when eps is not a positive finite number or x is not a floating-point
      array.
    """
    raise NotImplementedError("Part 1: write numerical_gradient")
