"""Part 2: out-of-place forward of the prefix matrix products (numpy flavor).

P[i] = W[0] @ W[1] @ ... @ W[i], returned as a new np.ndarray.

Run `grader check part2` to grade this file; `grader hint part2` when stuck.
"""

from __future__ import annotations

import numpy as np


def prefix_products(W: np.ndarray) -> np.ndarray:
    """Return a new P of W's shape, dtype and device with P[i] = W[0] @ ... @ W[i].

    W: (N, D, D). Raises ValueError when W is not (N, D, D). W must not be modified and the
    result must share no memory with it. You may import Part 1:
    `from exercises.part1_inplace import prefix_products_out` (or a relative import).
    """
    raise NotImplementedError("Part 2: write prefix_products")
