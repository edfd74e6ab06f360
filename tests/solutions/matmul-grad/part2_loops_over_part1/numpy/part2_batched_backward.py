"""Right values, with Part 1 called once per matrix of the broadcast batch."""

import numpy as np
from exercises.part1_matmul_backward import matmul_backward


def _check(A, B, dC):
    if A.ndim < 2 or B.ndim < 2 or A.shape[-1] != B.shape[-2]:
        raise ValueError("A and B cannot be multiplied")
    batch = np.broadcast_shapes(tuple(A.shape[:-2]), tuple(B.shape[:-2]))
    if tuple(dC.shape) != (*batch, A.shape[-2], B.shape[-1]):
        raise ValueError("dC does not have C's shape")


def batched_matmul_backward(A, B, dC):
    _check(A, B, dC)
    batch = np.broadcast_shapes(A.shape[:-2], B.shape[:-2])
    As = np.broadcast_to(A, (*batch, *A.shape[-2:])).reshape(-1, *A.shape[-2:])
    Bs = np.broadcast_to(B, (*batch, *B.shape[-2:])).reshape(-1, *B.shape[-2:])
    pairs = [matmul_backward(a, b, g) for a, b, g in
             zip(As, Bs, dC.reshape(-1, *dC.shape[-2:]), strict=True)]
    dA = np.stack([p[0] for p in pairs]).reshape(*batch, *A.shape[-2:])
    dB = np.stack([p[1] for p in pairs]).reshape(*batch, *B.shape[-2:])
    return _reduce(dA, A.shape), _reduce(dB, B.shape)


def _reduce(grad, shape):
    grad = grad.sum(axis=tuple(range(grad.ndim - len(shape))))
    return grad.sum(axis=tuple(i for i, n in enumerate(shape) if n == 1), keepdims=True)
