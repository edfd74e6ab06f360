"""Part 4: Hillis-Steele scan for the prefix matrix products (torch flavor).

An inclusive parallel scan: with offsets step = 1, 2, 4, ... while step < N, each level computes
new[i] = old[i - step] @ old[i] for i >= step and keeps new[i] = old[i] for i < step. That is
ceil(log2 N) levels of independent matmuls: O(log N) depth, O(N log N) matmuls of work.

Run `grader check part4` to grade this file; `grader hint part4` when stuck.
"""

from __future__ import annotations

import torch


def hillis_steele_scan_forward(W: torch.Tensor) -> tuple[torch.Tensor, list]:
    """Return (P, levels): P the inclusive prefix products of W (W's shape, dtype and
    device), levels one entry per level.

    W: (N, D, D). Raises ValueError when W is not (N, D, D). Each entry of levels holds whatever
    your backward needs for that level (for example the tuple (step, old)). Do not modify W.
    """
    raise NotImplementedError("Part 4: write hillis_steele_scan_forward")


def hillis_steele_scan_backward(levels: list, dP: torch.Tensor) -> torch.Tensor:
    """Return dW (W's shape, dtype and device), given the levels from the forward and
    dP = dL/dP.

    Walk the levels in reverse; do not modify dP.
    """
    raise NotImplementedError("Part 4: write hillis_steele_scan_backward")
