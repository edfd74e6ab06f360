"""A scan forward, and a backward that re-runs the sequential forward under autograd."""

import torch


def hillis_steele_scan_forward(W):
    if W.ndim != 3 or W.shape[1] != W.shape[2]:
        raise ValueError("W must be (N, D, D)")
    current, levels, step = W.clone(), [], 1
    while step < W.shape[0]:
        levels.append((step, current))
        new = current.clone()
        new[step:] = current[:-step] @ current[step:]
        current, step = new, step * 2
    return current, levels


def hillis_steele_scan_backward(levels, dP):
    # Rebuild W from the first level's input (or dP's shape when there are no levels).
    W = (levels[0][1] if levels else torch.eye(dP.shape[1]).expand_as(dP)).detach()
    W = W.clone().requires_grad_()
    products = [W[0]]
    for i in range(1, W.shape[0]):
        products.append(products[-1] @ W[i])
    (dW,) = torch.autograd.grad(torch.stack(products), W, dP)
    return dW
