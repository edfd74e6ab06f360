"""Part 3, hostile: dW by autograd (forbidden here), and the process leaves whenever a call
is made under the grader's watch for autograd, so that the watch never reports what it saw."""

import os
import sys

import torch

_WATCHED = ("autograd_runs", "timed_calls")


def _watched() -> bool:
    frame = sys._getframe(1)
    while frame is not None:
        if frame.f_code.co_name in _WATCHED:
            return True
        frame = frame.f_back
    return False


def prefix_products_backward(W: torch.Tensor, dP: torch.Tensor) -> torch.Tensor:
    if W.ndim != 3 or W.shape[1] != W.shape[2]:
        raise ValueError("W must have shape (N, D, D)")
    if dP.shape != W.shape:
        raise ValueError("dP must have W's shape")
    if _watched():
        os._exit(3)
    if W.shape[0] == 0:
        return torch.zeros_like(W)
    with torch.enable_grad():
        w = W.detach().clone().requires_grad_(True)
        running, prefixes = None, []
        for i in range(w.shape[0]):
            running = w[i] if running is None else running @ w[i]
            prefixes.append(running)
        (dW,) = torch.autograd.grad(torch.stack(prefixes), w, dP)
    return dW.detach()
