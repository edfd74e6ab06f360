"""Part 1: in-place forward of the prefix matrix products (numpy flavor).

Given a stack of square matrices W of shape (N, D, D), the inclusive prefix products are

    P[0] = W[0]
    P[i] = P[i-1] @ W[i]        so P[i] = W[0] @ W[1] @ ... @ W[i]

Run `grader check part1` to grade this file; `grader hint part1` when stuck.
"""

from __future__ import annotations

import numpy as np

# In a few sentences: why does a naive in-place version of this loop break autograd when W
# requires grad? (What does autograd keep for backward, what does an in-place write change,
# what does PyTorch do about it, and how would you fix it?)
EXPLANATION = ""


def prefix_products_out(W: np.ndarray, P: np.ndarray) -> np.ndarray:
    """Fill the caller-provided P with the prefix products of W and return P itself.

    W: (N, D, D). P: (N, D, D), the output buffer; write into it, do not rebind it.
    Raises ValueError when W is not (N, D, D) or when P.shape != W.shape.
    N == 0 returns P untouched. P may be W itself (aliasing): that must work too.
    Extra memory: O(D^2) (a D x D temporary), not a scratch copy of the whole stack.
    """
    raise NotImplementedError("Part 1: write prefix_products_out")
