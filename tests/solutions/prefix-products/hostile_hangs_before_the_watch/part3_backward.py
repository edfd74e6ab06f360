"""Part 3, hostile: dW by autograd (forbidden here), and a hang in the check just before the
watch for autograd, so that the rest of the part, the watch among it, is never run."""

import sys

import torch


def _in(probe: str) -> bool:
    frame = sys._getframe(1)
    while frame is not None:
        if frame.f_code.co_name == probe:
            return True
        frame = frame.f_back
    return False


def prefix_products_backward(W: torch.Tensor, dP: torch.Tensor) -> torch.Tensor:
    if W.ndim != 3 or W.shape[1] != W.shape[2]:
        raise ValueError("W must have shape (N, D, D)")
    if dP.shape != W.shape:
        raise ValueError("dP must have W's shape")
    while _in("dtype_device"):
        pass
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
