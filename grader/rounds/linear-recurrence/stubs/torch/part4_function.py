"""Part 4: the scan as a torch.autograd.Function (torch flavor only).

Wrap Part 2's scan in a torch.autograd.Function whose backward is Part 3's, so that
linear_recurrence_scan(a, b, h0).sum().backward() fills a.grad, b.grad and h0.grad through your
code. Use either style: forward(ctx, a, b, h0), or forward(a, b, h0) with setup_context.

Run `grader check part4` to grade this file; `grader hint part4` when stuck.
"""

from __future__ import annotations

from typing import Any

import torch


class LinearRecurrence(torch.autograd.Function):
    """h = scan_recurrence(a, b, h0) with a hand-written backward (Parts 2 and 3: import them,
    `from exercises.part2_scan import scan_recurrence`)."""

    @staticmethod
    def forward(a: torch.Tensor, b: torch.Tensor,  # type: ignore[override]
                h0: torch.Tensor) -> torch.Tensor:
        """Return h (T, D). Raises ValueError for the shapes Part 1 rejects."""
        raise NotImplementedError("Part 4: write LinearRecurrence.forward")

    @staticmethod
    def setup_context(ctx: Any, inputs: tuple[torch.Tensor, ...], output: torch.Tensor) -> None:
        """Save what backward needs with ctx.save_for_backward, and nothing more: O(T * D)
        numbers, not the scan's intermediate levels or a graph."""
        raise NotImplementedError("Part 4: write LinearRecurrence.setup_context")

    @staticmethod
    def backward(ctx: Any, dh: torch.Tensor) -> tuple[torch.Tensor | None, ...]:  # type: ignore[override]
        """Return (da, db, dh0) in the order of forward's inputs, computing only the gradients
        ctx.needs_input_grad asks for (None for the others)."""
        raise NotImplementedError("Part 4: write LinearRecurrence.backward")


def linear_recurrence_scan(a: torch.Tensor, b: torch.Tensor, h0: torch.Tensor) -> torch.Tensor:
    """Return LinearRecurrence.apply(a, b, h0). Must not modify a, b or h0."""
    raise NotImplementedError("Part 4: write linear_recurrence_scan")
