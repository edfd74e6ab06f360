"""Asks torch.func for the vector-Jacobian product instead of deriving it."""

import torch


def matmul_backward(A, B, dC):
    if A.ndim != 2 or B.ndim != 2 or A.shape[1] != B.shape[0]:
        raise ValueError("A and B cannot be multiplied")
    if tuple(dC.shape) != (A.shape[0], B.shape[1]):
        raise ValueError("dC does not have C's shape")
    _, pullback = torch.func.vjp(torch.matmul, A, B)
    return pullback(dC)
