import torch


def relative_error(a, b):
    if a.shape != b.shape:
        raise ValueError("shapes differ")
    tiny = torch.finfo(a.dtype).tiny
    per_entry = (a - b).abs() / torch.clamp(torch.maximum(a.abs(), b.abs()), min=tiny)
    return max(per_entry.reshape(-1).tolist(), default=0.0)
