"""The two matmuls, in a file whose import does about a quarter of a second of work first (as a module
that imports scipy, or builds a table, pays in every process that imports it)."""

import numpy as np

_WARMUP = sum(i * i for i in range(4_000_000))


def matmul_backward(A, B, dC):
    if A.ndim != 2 or B.ndim != 2:
        raise ValueError(f"A and B must be 2-D, got {A.shape} and {B.shape}")
    if A.shape[1] != B.shape[0]:
        raise ValueError(f"A {A.shape} and B {B.shape} cannot be multiplied")
    if dC.shape != (A.shape[0], B.shape[1]):
        raise ValueError(f"dC must be {(A.shape[0], B.shape[1])}, got {dC.shape}")
    return dC @ B.T, A.T @ dC
