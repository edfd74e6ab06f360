import torch


def relative_error(a, b):
    if a.shape != b.shape:
        raise ValueError("shapes differ")
    if a.numel() == 0:
        return 0.0
    return float(((a - b).abs() / torch.maximum(a.abs(), b.abs())).max())
