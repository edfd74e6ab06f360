"""Buggy: updates one buffer in place, low to high, so a level reads slots it already updated."""


def hillis_steele_scan_forward(W):
    current = W * 1
    levels = []
    step = 1
    while step < len(W):
        levels.append((step, current * 1))
        for i in range(step, len(W)):
            current[i] = current[i - step] @ current[i]
        step *= 2
    return current, levels


def hillis_steele_scan_backward(levels, dP):
    """A right backward: it is the forward's levels that are wrong."""
    grad = dP * 1
    for step, old in reversed(levels):
        upstream = grad
        grad = upstream * 0
        grad[:step] += upstream[:step]
        grad[:-step] += upstream[step:] @ old[step:].swapaxes(-1, -2)
        grad[step:] += old[:-step].swapaxes(-1, -2) @ upstream[step:]
    return grad
