"""The seed's Part 4: a snapshot per level, and a per-index backward loop."""

import numpy as np


def hillis_steele_scan_forward(W: np.ndarray):
    if W.ndim != 3 or W.shape[1] != W.shape[2]:
        raise ValueError("W must have shape (N, D, D)")
    n = W.shape[0]
    cur = W.copy()
    levels = []
    step = 1
    while step < n:
        old = cur.copy()
        new = old.copy()
        new[step:] = old[:-step] @ old[step:]
        levels.append((step, old))
        cur = new
        step *= 2
    return cur, levels


def hillis_steele_scan_backward(levels, dP: np.ndarray) -> np.ndarray:
    grad = dP.copy()
    n = dP.shape[0]
    for step, old in reversed(levels):
        grad_old = np.zeros_like(grad)
        grad_old[:step] += grad[:step]
        for i in range(step, n):
            G = grad[i]
            grad_old[i - step] += G @ old[i].T
            grad_old[i] += old[i - step].T @ G
        grad = grad_old
    return grad
