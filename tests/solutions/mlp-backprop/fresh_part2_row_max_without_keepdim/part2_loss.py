import torch


def softmax_cross_entropy(logits, y):
    if logits.dim() != 2:
        raise ValueError("logits must be (B, C)")
    B, C = logits.shape
    if y.shape != (B,) or y.dtype.is_floating_point or y.dtype == torch.bool:
        raise ValueError("y must be B integer labels")
    if B > 0 and (y.min() < 0 or y.max() >= C):
        raise ValueError("labels out of range")
    mx, _ = logits.max(dim=1)
    z = logits - mx
    logp = z - z.exp().sum(dim=1, keepdim=True).log()
    idx = torch.arange(B)
    loss = -logp[idx, y].sum() / B
    g = logp.exp()
    g[idx, y] -= 1
    return float(loss), g / B
