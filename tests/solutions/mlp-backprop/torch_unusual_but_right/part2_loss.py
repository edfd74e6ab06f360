"""Known-good solution in an unusual style: torch.logsumexp and a 0-d tensor loss."""

import torch


def softmax_cross_entropy(logits, y):
    if logits.dim() != 2 or tuple(y.shape) != (logits.shape[0],):
        raise ValueError("logits must be (B, C) and y (B,)")
    if bool((y < 0).any()) or bool((y >= logits.shape[1]).any()):
        raise ValueError("label out of range")
    log_probs = logits - torch.logsumexp(logits, dim=1, keepdim=True)
    loss = -log_probs.gather(1, y[:, None]).mean()
    grad = log_probs.exp()
    grad.scatter_add_(1, y[:, None], -torch.ones_like(grad[:, :1]))
    return loss, grad.div_(logits.shape[0])
