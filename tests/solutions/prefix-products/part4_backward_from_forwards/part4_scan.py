"""Part 4, torch reference: Hillis-Steele inclusive scan under matmul, forward and backward."""

from __future__ import annotations

import torch

Levels = list[tuple[int, torch.Tensor]]


@torch.no_grad()
def hillis_steele_scan_forward(W: torch.Tensor) -> tuple[torch.Tensor, Levels]:
    """Return (P, levels): ceil(log2 N) levels, one batched matmul each.

    Level with offset s: new[i] = old[i - s] @ old[i] for i >= s (the lower index is the left
    factor: matmul is associative, not commutative), new[i] = old[i] below s. Each level reads
    only the previous level's snapshot, which is what `levels` keeps for the backward.
    """
    if W.ndim != 3 or W.shape[1] != W.shape[2]:
        raise ValueError(f"W must have shape (N, D, D), got {tuple(W.shape)}")
    n = W.shape[0]
    current = W.clone()
    levels: Levels = []
    step = 1
    while step < n:
        levels.append((step, current))
        new = torch.empty_like(current)
        new[:step] = current[:step]
        torch.matmul(current[:-step], current[step:], out=new[step:])
        current = new
        step *= 2
    return current, levels


@torch.no_grad()
def hillis_steele_scan_backward(levels: Levels, dP: torch.Tensor) -> torch.Tensor:
    """dW from forwards: L(W) = sum(P(W) * dP) is linear in each entry of W, so
    dL/dW[k] = L(W + e_k) - L(W) exactly. One batched forward per entry, no backward at all."""
    if not levels:
        return dP.clone()
    W = levels[0][1].double()
    n, d, _ = W.shape
    G = dP.double()
    k = n * d * d
    batch = W.unsqueeze(0).repeat(k, 1, 1, 1)              # (K, N, D, D)
    batch.view(k, -1)[torch.arange(k), torch.arange(k)] += 1.0
    def scan(x):                                         # (..., N, D, D), log-depth scan
        step = 1
        while step < n:
            new = x.clone()
            new[..., step:, :, :] = x[..., :-step, :, :] @ x[..., step:, :, :]
            x = new
            step *= 2
        return x
    total = (scan(batch) * G).sum(dim=(-1, -2, -3))
    base = (scan(W) * G).sum()
    return (total - base).reshape(n, d, d).to(dP.dtype)
