"""Right products, but the first level is computed in W's own memory (no copy first)."""


def hillis_steele_scan_forward(W):
    current = W
    levels = []
    step = 1
    while step < len(W):
        levels.append((step, current * 1))
        current[step:] = current[:-step] @ current[step:]
        step *= 2
    return current, levels


def hillis_steele_scan_backward(levels, dP):
    grad = dP * 1
    for step, old in reversed(levels):
        upstream = grad
        grad = upstream * 1
        grad[step:] = old[:-step].swapaxes(-1, -2) @ upstream[step:]
        grad[:-step] += upstream[step:] @ old[step:].swapaxes(-1, -2)
    return grad
