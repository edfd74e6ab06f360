"""Correct, its backward marked @once_differentiable: a double backward is refused
(full marks)."""

import torch
from exercises.part2_batched_backward import batch_shape
from torch.autograd.function import once_differentiable


class MatMul(torch.autograd.Function):
    @staticmethod
    def forward(A, B):
        batch_shape(A, B)
        return A @ B

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(*inputs)

    @staticmethod
    @once_differentiable
    def backward(ctx, dC):
        A, B = ctx.saved_tensors
        dA = (dC @ B.mT).sum_to_size(A.shape) if ctx.needs_input_grad[0] else None
        dB = (A.mT @ dC).sum_to_size(B.shape) if ctx.needs_input_grad[1] else None
        return dA, dB


def matmul(A, B):
    return MatMul.apply(A, B)
