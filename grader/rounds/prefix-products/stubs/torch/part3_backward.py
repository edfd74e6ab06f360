"""Part 3: hand-written backward of the prefix matrix products (torch flavor).

Forward: P[i] = P[i-1] @ W[i], P[0] = W[0]. Given the upstream gradients dP[i] = dL/dP[i] for
every prefix, compute dW[i] = dL/dW[i]. No autograd: derive it. For one step Y = A @ B with
G = dL/dY: dL/dA = G @ B^T and dL/dB = A^T @ G.

Run `grader check part3` to grade this file; `grader hint part3` when stuck.
"""

from __future__ import annotations

import torch


def prefix_products_backward(W: torch.Tensor, dP: torch.Tensor) -> torch.Tensor:
    """Return dW (W's shape, dtype and device) for the loss whose gradient w.r.t. each
    P[i] is dP[i].

    W, dP: (N, D, D). Raises ValueError when W is not (N, D, D) or dP.shape != W.shape.
    Must not call autograd, must not modify W or dP, and must cost O(N * D^3), not O(N^2 * D^3).
    You may import your forward: `from exercises.part2_out_of_place import prefix_products`.
    """
    raise NotImplementedError("Part 3: write prefix_products_backward")
