"""Buggy: stops while 2 * step < N, one level short, so the tail misses its oldest factors."""


def hillis_steele_scan_forward(W):
    current = W * 1
    levels = []
    step = 1
    while 2 * step < len(W):
        levels.append((step, current))
        new = current * 1
        new[step:] = current[:-step] @ current[step:]
        current = new
        step *= 2
    return current, levels
