"""Part 1: the backward of a matrix product, by hand (numpy flavor).

Forward: C = A @ B with A of shape (M, K) and B of shape (K, N), so C is (M, N). Given the
upstream gradient dC = dL/dC (M, N), compute dA = dL/dA and dB = dL/dB: derive the formulas
(the shapes alone nearly force them).

Run `grader check part1` to grade this file; `grader hint part1` when stuck.
"""

from __future__ import annotations

import numpy as np


def matmul_backward(A: np.ndarray, B: np.ndarray,
                    dC: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Return (dA, dB): dA of A's shape (M, K), dB of B's shape (K, N), in A's dtype.

    Raises ValueError when A or B is not 2-D, when A.shape[1] != B.shape[0], or when
    dC.shape != (M, N). Must not use an autograd library and must not modify A, B or dC.
    """
    raise NotImplementedError("Part 1: write matmul_backward")
