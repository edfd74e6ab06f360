import torch

def softmax_cross_entropy(logits, y):
    if logits.dim() != 2:
        raise ValueError("logits must be (B, C)")
    B, C = logits.shape
    if tuple(y.shape) != (B,):
        raise ValueError("y must be (B,)")
    if y.dtype.is_floating_point or y.dtype.is_complex or y.dtype == torch.bool:
        raise ValueError("y must be integer labels")
    if B and (int(y.min()) < 0 or int(y.max()) >= C):
        raise ValueError("label out of range")
    lse = torch.logsumexp(logits, dim=1)
    picked = logits.gather(1, y.long().unsqueeze(1)).squeeze(1)
    loss = (lse - picked).mean()
    grad = torch.softmax(logits, 0)
    grad[torch.arange(B), y] -= 1.0
    return loss.item(), grad / B
