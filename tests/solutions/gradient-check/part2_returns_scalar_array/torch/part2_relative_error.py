import torch


def relative_error(a, b):
    if a.shape != b.shape:
        raise ValueError("shapes differ")
    if a.numel() == 0:
        return 0.0
    tiny = torch.finfo(a.dtype).tiny
    return ((a - b).abs() / torch.clamp(torch.maximum(a.abs(), b.abs()), min=tiny)).max()
