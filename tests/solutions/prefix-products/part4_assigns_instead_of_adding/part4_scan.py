"""Buggy: the backward assigns (=) where a slot gets gradient twice."""


def hillis_steele_scan_forward(W):
    if W.ndim != 3 or W.shape[1] != W.shape[2]:
        raise ValueError("W must be (N, D, D)")
    current = W * 1
    levels = []
    step = 1
    while step < len(W):
        levels.append((step, current))
        new = current * 1
        new[step:] = current[:-step] @ current[step:]
        current = new
        step *= 2
    return current, levels


def hillis_steele_scan_backward(levels, dP):
    grad = dP * 1
    for step, old in reversed(levels):
        upstream = grad
        grad = upstream * 0
        grad[:step] += upstream[:step]
        grad[:-step] = upstream[step:] @ old[step:].swapaxes(-1, -2)
        grad[step:] = old[:-step].swapaxes(-1, -2) @ upstream[step:]
    return grad
