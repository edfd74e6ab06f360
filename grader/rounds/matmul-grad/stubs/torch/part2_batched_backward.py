"""Part 2: the backward of a batched matrix product with broadcasting (torch flavor).

Forward: C = A @ B as torch.matmul computes it for A of shape (..., M, K) and B of shape
(..., K, N): the batch dimensions (all but the last two) broadcast against each other, so
A (S, M, K) @ B (K, N) is S products with the same B, and A (3, 1, M, K) @ B (4, K, N) gives C
of shape (3, 4, M, N). Given dC = dL/dC of C's shape, compute dA and dB by hand.

Run `grader check part2` to grade this file; `grader hint part2` when stuck.
"""

from __future__ import annotations

import torch


def batched_matmul_backward(A: torch.Tensor, B: torch.Tensor,
                            dC: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Return (dA, dB) with exactly A's and B's shapes (and A's dtype).

    A gradient has its own input's shape: where an input was broadcast along a batch dimension
    (one it lacks, or one where it has size 1), its gradient is summed over that dimension.
    Raises ValueError when A or B has fewer than 2 dimensions, when A.shape[-1] !=
    B.shape[-2], when the batch dimensions cannot broadcast, or when dC does not have C's
    shape. No Python loop over the batch: batched operations only. Must not call autograd and
    must not modify A, B or dC. You may import Part 1:
    `from exercises.part1_matmul_backward import matmul_backward`.
    """
    raise NotImplementedError("Part 2: write batched_matmul_backward")
