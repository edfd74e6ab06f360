"""Buggy: combines old[i] @ old[i - step], the higher index on the left."""


def hillis_steele_scan_forward(W):
    current = W * 1
    levels = []
    step = 1
    while step < len(W):
        levels.append((step, current))
        new = current * 1
        new[step:] = current[step:] @ current[:-step]
        current = new
        step *= 2
    return current, levels
