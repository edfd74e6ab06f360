"""Part 3: the backward of the recurrence by hand, as a reverse scan (numpy flavor).

Forward: h[t] = a[t] * h[t-1] + b[t], h[-1] = h0. Given dh[t] = dL/dh[t] for every step (the
gradient that reaches h[t] from outside the recurrence), compute da, db and dh0. No autograd:
derive it. The total gradient of h[t] satisfies a linear recurrence of its own, run from the
last step to the first: compute it with Part 2's scan (O(log T) depth), not a Python loop.

Run `grader check part3` to grade this file; `grader hint part3` when stuck.
"""

from __future__ import annotations

import numpy as np


def recurrence_backward(a: np.ndarray, h0: np.ndarray, h: np.ndarray,
                        dh: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Return (da, db, dh0): da and db of shape (T, D), dh0 of shape (D,), all of a's dtype.

    a, h, dh: (T, D); h0: (D,); h is the forward's output for these a and h0 (and some b).
    Raises ValueError unless a.ndim == 2, h0.shape == (D,) and h.shape == dh.shape == a.shape.
    T == 0 returns zeros of the right shapes. Do not modify the inputs, do not call autograd,
    and return arrays of your own (never dh itself, even where db equals it).
    You may import Part 2 (`from exercises.part2_scan import scan_recurrence`).
    """
    raise NotImplementedError("Part 3: write recurrence_backward")
