"""Buggy: each scan level combines old[i] @ old[i - s], putting the higher index on the left."""

from __future__ import annotations

import torch

Levels = list[tuple[int, torch.Tensor]]


@torch.no_grad()
def hillis_steele_scan_forward(W: torch.Tensor) -> tuple[torch.Tensor, Levels]:
    """Inclusive matmul scan in ceil(log2 N) doubling levels; returns (P, saved levels)."""
    if W.dim() != 3 or W.shape[1] != W.shape[2]:
        raise ValueError(f"W must be (N, D, D), got {tuple(W.shape)}")
    n = W.shape[0]
    cur = W.clone()
    saved: Levels = []
    offset = 1
    while offset < n:
        saved.append((offset, cur))
        nxt = cur.clone()
        nxt[offset:] = torch.bmm(cur[offset:], cur[:n - offset])
        cur = nxt
        offset <<= 1
    return cur, saved


@torch.no_grad()
def hillis_steele_scan_backward(levels: Levels, dP: torch.Tensor) -> torch.Tensor:
    """Walk the saved levels backwards and return dW."""
    g = dP.clone()
    for offset, prev in levels[::-1]:
        up = g
        g = up.clone()
        g[offset:] = torch.bmm(prev[:-offset].transpose(1, 2), up[offset:])
        g[:-offset] += torch.bmm(up[offset:], prev[offset:].transpose(1, 2))
    return g
