"""Batched matmuls, but the leading axes are reduced with the builtin sum(), which
iterates over them."""

import numpy as np


def _check(A, B, dC):
    if A.ndim < 2 or B.ndim < 2 or A.shape[-1] != B.shape[-2]:
        raise ValueError("A and B cannot be multiplied")
    batch = np.broadcast_shapes(tuple(A.shape[:-2]), tuple(B.shape[:-2]))
    if tuple(dC.shape) != (*batch, A.shape[-2], B.shape[-1]):
        raise ValueError("dC does not have C's shape")


def batched_matmul_backward(A, B, dC):
    _check(A, B, dC)
    return _reduce(dC @ B.mT, A.shape), _reduce(A.mT @ dC, B.shape)


def _reduce(grad, shape):
    while grad.ndim > len(shape):
        grad = sum(grad)
    return grad.sum_to_size(shape)
