"""Part 3, hostile: dW by autograd (forbidden here), and a hang in the check just before the
watch for autograd, so that the rest of the part, the watch among it, is never run."""

import inspect

import torch


def prefix_products_backward(W: torch.Tensor, dP: torch.Tensor) -> torch.Tensor:
    if W.ndim != 3 or W.shape[1] != W.shape[2]:
        raise ValueError("W must have shape (N, D, D)")
    if dP.shape != W.shape:
        raise ValueError("dP must have W's shape")
    while any(caller.function == "dtype_device" for caller in inspect.stack()):
        pass
    leaf = W.detach().clone().requires_grad_(True)
    with torch.enable_grad():
        total = torch.zeros((), dtype=W.dtype, device=W.device)
        product = None
        for k in range(leaf.shape[0]):
            product = leaf[k] if product is None else product @ leaf[k]
            total = total + (product * dP[k]).sum()
        if leaf.shape[0]:
            total.backward()
    return leaf.grad if leaf.grad is not None else torch.zeros_like(W)
