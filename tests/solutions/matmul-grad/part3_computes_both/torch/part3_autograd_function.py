"""Computes both gradients with Part 2, then returns None where none is needed."""

import torch
from exercises.part2_batched_backward import batch_shape, batched_matmul_backward


class MatMul(torch.autograd.Function):
    @staticmethod
    def forward(A, B):
        batch_shape(A, B)
        return A @ B

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(*inputs)

    @staticmethod
    def backward(ctx, dC):
        dA, dB = batched_matmul_backward(*ctx.saved_tensors, dC)
        return (dA if ctx.needs_input_grad[0] else None,
                dB if ctx.needs_input_grad[1] else None)


def matmul(A, B):
    return MatMul.apply(A, B)
