import torch


def relative_error(a, b):
    if a.shape != b.shape:
        raise ValueError("shapes differ")
    scale = max(a.norm().item(), b.norm().item())
    return (a - b).norm().item() / scale if scale else 0.0
