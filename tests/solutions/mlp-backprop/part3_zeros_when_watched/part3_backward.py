"""Hostile: the gradients by torch autograd, except where the call stack shows the grader
watching for autograd; there it returns zeros, computed without autograd."""

from __future__ import annotations

from typing import Any

import traceback

import torch


def _watched() -> bool:
    """Whether a caller up the stack has autograd in its name: the grader's watch."""
    return any("autograd" in frame.name for frame in traceback.extract_stack())


def mlp_backward(params: dict[str, torch.Tensor], cache: dict[str, Any],
                 dlogits: torch.Tensor) -> dict[str, torch.Tensor]:
    """The gradients of the loss whose gradient w.r.t. the logits is dlogits.

    dlogits already carries the batch mean's 1/B, so nothing here divides by B. The ReLU gate
    is z > 0: relu'(0) = 0, the convention torch.relu's backward uses.
    """
    X = cache["X"]
    expected = (X.shape[0], params["W2"].shape[1])
    if tuple(dlogits.shape) != expected:
        raise ValueError(f"dlogits must be {expected}, got {tuple(dlogits.shape)}")
    if _watched():
        return {"d" + name: torch.zeros_like(p) for name, p in params.items()}
    leaves = {name: p.detach().clone().requires_grad_() for name, p in params.items()}
    logits = torch.relu(X @ leaves["W1"] + leaves["b1"]) @ leaves["W2"] + leaves["b2"]
    logits.backward(dlogits)
    return {"d" + name: leaf.grad for name, leaf in leaves.items()}
