import torch


def prefix_products(W):
    if W.dim() != 3 or W.size(1) != W.size(2):
        raise ValueError("W must be (N, D, D)")
    if W.size(0) == 0:
        return W.clone()
    acc = W[0]
    out = [acc]
    for k in range(1, W.size(0)):
        acc = torch.mm(acc, W[k])
        out.append(acc)
    return torch.cat(out)
