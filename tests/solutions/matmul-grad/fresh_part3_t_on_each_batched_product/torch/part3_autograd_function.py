"""Part 3: matmul as a custom autograd.Function (torch)."""

from __future__ import annotations

from typing import Any

import torch

from exercises.part2_batched_backward import batch_shape


class MatMul(torch.autograd.Function):
    @staticmethod
    def forward(A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:  # type: ignore[override]
        batch_shape(A, B)  # raises ValueError on bad shapes
        return A @ B

    @staticmethod
    def setup_context(ctx: Any, inputs: tuple[torch.Tensor, torch.Tensor],
                      output: torch.Tensor) -> None:
        ctx.save_for_backward(inputs[0], inputs[1])

    @staticmethod
    def backward(ctx: Any, dC: torch.Tensor) -> tuple[torch.Tensor | None, ...]:  # type: ignore[override]
        A, B = ctx.saved_tensors
        dA = dB = None
        if ctx.needs_input_grad[0]:
            dA = torch.matmul(dC, B.t()).sum_to_size(A.shape)
        if ctx.needs_input_grad[1]:
            dB = torch.matmul(A.t(), dC).sum_to_size(B.shape)
        return dA, dB


def matmul(A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
    return MatMul.apply(A, B)
