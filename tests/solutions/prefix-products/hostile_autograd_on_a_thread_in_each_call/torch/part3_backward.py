"""Part 3 by autograd on a thread started in each call, differentiated through TorchScript."""
from __future__ import annotations

import threading
from typing import List, Optional

import torch


@torch.jit.script
def _grad(out: torch.Tensor, inp: torch.Tensor, upstream: torch.Tensor) -> torch.Tensor:
    ups: List[Optional[torch.Tensor]] = [upstream]
    g = torch.autograd.grad([out], [inp], ups)[0]
    assert g is not None
    return g


def _autograd(W, dP, out):
    with torch.enable_grad():
        leaf = W.detach().requires_grad_(True)
        products = [leaf[0]]
        for i in range(1, leaf.shape[0]):
            products.append(products[-1] @ leaf[i])
        out.append(_grad(torch.stack(products), leaf, dP))


def prefix_products_backward(W: torch.Tensor, dP: torch.Tensor) -> torch.Tensor:
    if W.ndim != 3 or W.shape[1] != W.shape[2] or dP.shape != W.shape:
        raise ValueError("W must be (N, D, D) and dP like it")
    if W.shape[0] == 0:
        return torch.empty_like(W)
    out: list = []
    worker = threading.Thread(target=_autograd, args=(W, dP, out))
    worker.start()
    worker.join()
    return out[0]
