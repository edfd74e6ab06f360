"""Part 4 (forward(ctx, ...) style)."""

from __future__ import annotations

from typing import Any

import torch

from .part2_scan import scan_recurrence
from .part3_backward import recurrence_backward


class LinearRecurrence(torch.autograd.Function):
    @staticmethod
    def forward(ctx: Any, a, b, h0):
        h = scan_recurrence(a, b, h0)
        ctx.save_for_backward(a, h0, h)
        return h

    @staticmethod
    def backward(ctx: Any, dh):
        a, h0, h = ctx.saved_tensors
        da, db, dh0 = recurrence_backward(a, h0, h, dh)
        need = ctx.needs_input_grad
        return (da if need[0] else None, db if need[1] else None, dh0 if need[2] else None)


def linear_recurrence_scan(a, b, h0):
    return LinearRecurrence.apply(a, b, h0)
