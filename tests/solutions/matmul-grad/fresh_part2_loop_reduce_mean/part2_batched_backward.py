"""Part 2, numpy reference: the gradients of C = A @ B under matmul's broadcasting."""

from __future__ import annotations

import numpy as np


def batch_shape(A: np.ndarray, B: np.ndarray) -> tuple[int, ...]:
    """The broadcast batch shape of A (..., M, K) @ B (..., K, N); ValueError if there is none."""
    if A.ndim < 2 or B.ndim < 2:
        raise ValueError(f"A and B need at least 2 dimensions, got {A.shape} and {B.shape}")
    if A.shape[-1] != B.shape[-2]:
        raise ValueError(f"A {A.shape} and B {B.shape}: inner sizes differ")
    return np.broadcast_shapes(A.shape[:-2], B.shape[:-2])  # a ValueError when they clash


def sum_to_shape(grad: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """Sum a broadcast gradient back to the shape of the input that was broadcast.

    An input used along a broadcast axis contributed to every entry there, so its gradient is
    the sum over that axis: over the leading axes it lacks, and over its size-1 axes (kept).
    """
    grad = grad.sum(axis=tuple(range(grad.ndim - len(shape))))
    return grad.sum(axis=tuple(i for i, size in enumerate(shape) if size == 1), keepdims=True)


def batched_matmul_backward(A: np.ndarray, B: np.ndarray,
                            dC: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Return (dA, dB) for C = A @ B with A (..., M, K), B (..., K, N) broadcast like np.matmul.

    Per matrix the rule is Part 1's; the batched matmuls produce gradients of the broadcast
    shape, and each is summed back to its own input's shape.
    """
    expected = (*batch_shape(A, B), A.shape[-2], B.shape[-1])
    if dC.shape != expected:
        raise ValueError(f"dC must have C's shape {expected}, got {dC.shape}")
    full_a = np.einsum("...mn,...kn->...mk", dC, B)
    full_b = np.einsum("...mk,...mn->...kn", A, dC)

    def reduce(g, shape):
        while g.ndim > len(shape):          # axes the input never had
            g = g.mean(axis=0)
        for axis in range(len(shape)):      # size-1 axes that were stretched
            if shape[axis] == 1 and g.shape[axis] != 1:
                g = g.sum(axis=axis, keepdims=True)
        return np.ascontiguousarray(g).reshape(shape)

    return reduce(full_a, A.shape), reduce(full_b, B.shape)
