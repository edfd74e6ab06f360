"""Saves the output C beside A and B: backward never needs it."""

import torch
from exercises.part2_batched_backward import batch_shape


class MatMul(torch.autograd.Function):
    @staticmethod
    def forward(A, B):
        batch_shape(A, B)
        return A @ B

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(*inputs, output)

    @staticmethod
    def backward(ctx, dC):
        A, B, _ = ctx.saved_tensors
        dA = (dC @ B.mT).sum_to_size(A.shape) if ctx.needs_input_grad[0] else None
        dB = (A.mT @ dC).sum_to_size(B.shape) if ctx.needs_input_grad[1] else None
        return dA, dB


def matmul(A, B):
    return MatMul.apply(A, B)
