"""Part 3: check an analytic gradient against central differences (numpy flavor).

Run `grader check part3` to grade this file; `grader hint part3` when stuck.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np


def check_gradient(f: Callable[[np.ndarray], float], grad_f: Callable[[np.ndarray], np.ndarray],
                   x: np.ndarray, tol: float = 1e-6) -> tuple[bool, tuple[int, ...] | None, float]:
    """Compare grad_f(x) with numerical_gradient(f, x): return (ok, worst_index, worst_error).

    f: x -> a scalar. grad_f: x -> its claimed gradient, an array that must have x's shape.
    x: a floating-point array of any shape. tol: a positive finite number.

    - Estimate the gradient with Part 1 (eps = 1e-6) and compare entry by entry with Part 2's
      relative error, error[i] = |a[i] - n[i]| / max(|a[i]|, |n[i]|, tiny).
    - worst_index: the index of the largest error[i], a tuple of ints (() for a 0-d x), so that
      x[worst_index] is that entry; worst_error: that error, a Python float; ok: worst_error
      <= tol, a Python bool.
    - Kinks. Where f is not differentiable (ReLU or abs at 0, or closer to it than eps) the
      central difference straddles the kink and disagrees with any valid one-sided derivative.
      Detect such an entry (one whose error is over tol) by its one-sided differences
      (f(x + eps e_i) - f(x)) / eps and (f(x) - f(x - eps e_i)) / eps: at a kink they
      disagree by the jump in the derivative (for a smooth f only by about eps * |f''|), and
      the analytic value lies between them, up to rounding: at a point closer to the kink
      than eps the analytic value equals one of the slopes, which rounding may put a hair
      outside, so allow a slack of tol times the larger |slope| on either side.
      Say so with warnings.warn(message, UserWarning), the message containing "kink" (or "not
      differentiable"), and leave those entries out of the comparison: when the only
      disagreements are at kinks, ok is True; a wrong entry elsewhere is still reported. With
      no entry left to compare (x empty, or every entry at a kink): (True, None, 0.0).
    - float32 x (any dtype but float64): warnings.warn(message, UserWarning), the message
      naming float64, since at eps = 1e-6 a check in single precision is meaningless; then go
      on and return the result anyway.
    - Raise ValueError when grad_f(x) does not have x's shape or tol is not a positive finite
      number. Leave x unchanged.

    You may import Parts 1 and 2: `from exercises.part1_numerical_gradient import
    numerical_gradient` (or a relative import), likewise relative_error.
    """
    raise NotImplementedError("Part 3: write check_gradient")
