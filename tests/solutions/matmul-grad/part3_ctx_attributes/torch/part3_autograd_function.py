"""Keeps A and B as ctx attributes instead of save_for_backward."""

import torch
from exercises.part2_batched_backward import batch_shape


class MatMul(torch.autograd.Function):
    @staticmethod
    def forward(A, B):
        batch_shape(A, B)
        return A @ B

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.A, ctx.B = inputs

    @staticmethod
    def backward(ctx, dC):
        A, B = ctx.A, ctx.B
        dA = (dC @ B.mT).sum_to_size(A.shape) if ctx.needs_input_grad[0] else None
        dB = (A.mT @ dC).sum_to_size(B.shape) if ctx.needs_input_grad[1] else None
        return dA, dB


def matmul(A, B):
    return MatMul.apply(A, B)
