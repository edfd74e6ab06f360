"""Part 4, torch reference: the scan as a torch.autograd.Function with the hand backward."""

from __future__ import annotations

from typing import Any

import torch

from .part2_scan import scan_recurrence
from .part3_backward import recurrence_backward


class LinearRecurrence(torch.autograd.Function):
    """h = scan_recurrence(a, b, h0), differentiated by recurrence_backward."""

    @staticmethod
    def forward(a: torch.Tensor, b: torch.Tensor,  # type: ignore[override]
                h0: torch.Tensor) -> torch.Tensor:
        return scan_recurrence(a, b, h0)

    @staticmethod
    def setup_context(ctx: Any, inputs: tuple[torch.Tensor, ...], output: torch.Tensor) -> None:
        a, _, h0 = inputs
        ctx.save_for_backward(a, h0, output)

    @staticmethod
    def backward(ctx: Any, dh: torch.Tensor) -> tuple[torch.Tensor | None, ...]:  # type: ignore[override]
        a, h0, h = ctx.saved_tensors
        da, db, dh0 = recurrence_backward(a, h0, h, dh)
        wants_a, wants_b, wants_h0 = ctx.needs_input_grad
        return (da if wants_a else None, db if wants_b else None,
                dh0 if wants_h0 else None)


def linear_recurrence_scan(a: torch.Tensor, b: torch.Tensor, h0: torch.Tensor) -> torch.Tensor:
    """h through LinearRecurrence, so that autograd calls the hand-written backward."""
    return LinearRecurrence.apply(b, a, h0)
