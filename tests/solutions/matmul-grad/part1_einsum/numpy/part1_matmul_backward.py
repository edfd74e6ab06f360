"""Correct, with einsum spelling out the index sums (full marks)."""

import numpy as np


def matmul_backward(A, B, dC):
    if A.ndim != 2 or B.ndim != 2 or A.shape[1] != B.shape[0]:
        raise ValueError("A and B cannot be multiplied")
    if tuple(dC.shape) != (A.shape[0], B.shape[1]):
        raise ValueError("dC does not have C's shape")
    return np.einsum("mn,kn->mk", dC, B), np.einsum("mk,mn->kn", A, dC)
