"""Returns both gradients whatever ctx.needs_input_grad says."""

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
        return batched_matmul_backward(*ctx.saved_tensors, dC)


def matmul(A, B):
    return MatMul.apply(A, B)
