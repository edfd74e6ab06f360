"""Part 4 (saves too much)."""

from __future__ import annotations

from typing import Any

import torch

from .part2_scan import scan_recurrence
from .part3_backward import recurrence_backward


class LinearRecurrence(torch.autograd.Function):
    @staticmethod
    def forward(ctx: Any, a, b, h0):
        h = scan_recurrence(a, b, h0)
        size = 2 * a.shape[0]
        pad_a = torch.ones(size, a.shape[1], dtype=a.dtype)
        pad_b = torch.zeros(size, a.shape[1], dtype=a.dtype)
        ctx.save_for_backward(a, b, h0, h, pad_a, pad_b)
        return h

    @staticmethod
    def backward(ctx: Any, dh):
        a, b, h0, h, pad_a, pad_b = ctx.saved_tensors
        da, db, dh0 = recurrence_backward(a, h0, h, dh)
        need = ctx.needs_input_grad
        return (da if need[0] else None, db if need[1] else None, dh0 if need[2] else None)


def linear_recurrence_scan(a, b, h0):
    return LinearRecurrence.apply(a, b, h0)
