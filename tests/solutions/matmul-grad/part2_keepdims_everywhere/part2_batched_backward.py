"""Sums the right axes, all with keepdims: the leading axes an input lacks stay as 1s."""

import numpy as np


def _check(A, B, dC):
    if A.ndim < 2 or B.ndim < 2 or A.shape[-1] != B.shape[-2]:
        raise ValueError("A and B cannot be multiplied")
    batch = np.broadcast_shapes(tuple(A.shape[:-2]), tuple(B.shape[:-2]))
    if tuple(dC.shape) != (*batch, A.shape[-2], B.shape[-1]):
        raise ValueError("dC does not have C's shape")


def batched_matmul_backward(A, B, dC):
    _check(A, B, dC)
    return _reduce(dC @ B.swapaxes(-1, -2), A.shape), _reduce(A.swapaxes(-1, -2) @ dC, B.shape)


def _reduce(grad, shape):
    lead = grad.ndim - len(shape)
    axes = tuple(range(lead)) + tuple(lead + i for i, n in enumerate(shape) if n == 1)
    return grad.sum(axis=axes, keepdims=True) if axes else grad
