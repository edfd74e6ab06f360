"""Buggy: the forward returns P alone, without the levels the backward needs."""


def hillis_steele_scan_forward(W):
    current = W * 1
    step = 1
    while step < len(W):
        new = current * 1
        new[step:] = current[:-step] @ current[step:]
        current = new
        step *= 2
    return current
