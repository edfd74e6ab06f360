"""Forward-mode AD: the directional derivative of sum(dC * (A @ B)) along each entry."""

import torch
import torch.autograd.forward_ad as fwAD


def _gradient(dC, A, B, which):
    target = (A, B)[which]
    grad = torch.empty_like(target)
    with fwAD.dual_level():
        for index in range(target.numel()):
            tangent = torch.zeros_like(target).view(-1)
            tangent[index] = 1
            dual = fwAD.make_dual(target, tangent.view(target.shape))
            C = dual @ B if which == 0 else A @ dual
            grad.view(-1)[index] = (fwAD.unpack_dual(C).tangent * dC).sum()
    return grad


def matmul_backward(A, B, dC):
    if A.ndim != 2 or B.ndim != 2 or A.shape[1] != B.shape[0]:
        raise ValueError("A and B cannot be multiplied")
    if tuple(dC.shape) != (A.shape[0], B.shape[1]):
        raise ValueError("dC does not have C's shape")
    return _gradient(dC, A, B, 0), _gradient(dC, A, B, 1)
