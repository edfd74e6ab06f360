"""Part 3: matmul as a custom torch.autograd.Function (torch flavor only).

Wrap C = A @ B (with Part 2's broadcasting) in a torch.autograd.Function whose backward is
yours, so that autograd calls it: matmul(A, B).sum().backward() must fill A.grad and B.grad
through MatMul.backward. Use the torch 2 style: forward without ctx, then setup_context.

Run `grader check part3` to grade this file; `grader hint part3` when stuck.
"""

from __future__ import annotations

from typing import Any

import torch


class MatMul(torch.autograd.Function):
    """C = A @ B for A (..., M, K) and B (..., K, N), with a hand-written backward.

    Build it on Part 2 (`from exercises.part2_batched_backward import ...`: its function, or a
    helper you wrote there).
    """

    @staticmethod
    def forward(A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:  # type: ignore[override]
        """Return A @ B. Raises ValueError for the shapes Part 2 rejects."""
        raise NotImplementedError("Part 3: write MatMul.forward")

    @staticmethod
    def setup_context(ctx: Any, inputs: tuple[torch.Tensor, torch.Tensor],
                      output: torch.Tensor) -> None:
        """Save what backward needs with ctx.save_for_backward: the inputs, not the output."""
        raise NotImplementedError("Part 3: write MatMul.setup_context")

    @staticmethod
    def backward(ctx: Any, dC: torch.Tensor) -> tuple[torch.Tensor | None, ...]:  # type: ignore[override]
        """Return (dA, dB), each of its input's shape, computing only the gradients that
        ctx.needs_input_grad asks for (None for the others). A double backward through it must
        either be right or raise torch's error (see @once_differentiable)."""
        raise NotImplementedError("Part 3: write MatMul.backward")


def matmul(A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
    """Return MatMul.apply(A, B): C = A @ B through your Function. Must not modify A or B."""
    raise NotImplementedError("Part 3: write matmul")
