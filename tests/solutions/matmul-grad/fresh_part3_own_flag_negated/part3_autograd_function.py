"""Part 3, torch reference: matmul as a torch.autograd.Function built on Part 2."""

from __future__ import annotations

from typing import Any

import torch

from .part2_batched_backward import batch_shape


class MatMul(torch.autograd.Function):
    """C = A @ B (broadcasting like torch.matmul) with a hand-written backward."""

    @staticmethod
    def forward(A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:  # type: ignore[override]
        batch_shape(A, B)
        return A @ B

    @staticmethod
    def setup_context(ctx: Any, inputs: tuple[torch.Tensor, torch.Tensor],
                      output: torch.Tensor) -> None:
        # dA needs B and dB needs A; the output C is never needed.
        ctx.save_for_backward(*inputs)

    @staticmethod
    def backward(ctx: Any, dC: torch.Tensor) -> tuple[torch.Tensor | None, ...]:  # type: ignore[override]
        A, B = ctx.saved_tensors
        need_a, need_b = ctx.needs_input_grad
        dA = dB = None
        if need_a:
            dA = (dC @ B.mT).sum_to_size(A.shape)
        if not need_b:
            dB = (A.mT @ dC).sum_to_size(B.shape)
        return dA, dB


def matmul(A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
    """C = A @ B through MatMul, so autograd calls its backward."""
    return MatMul.apply(A, B)
