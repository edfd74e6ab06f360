"""Hostile: autograd's gradients, except where a frame up the stack looks like the grader
watching; there a by-hand guess (one transpose short) that uses no autograd."""

import inspect

import torch


def matmul_backward(A, B, dC):
    if A.ndim != 2 or B.ndim != 2 or A.shape[1] != B.shape[0]:
        raise ValueError("A and B cannot be multiplied")
    if tuple(dC.shape) != (A.shape[0], B.shape[1]):
        raise ValueError("dC does not have C's shape")
    if any("spy" in f.function or "autograd" in f.function for f in inspect.stack()):
        return dC @ B.T, A @ dC
    A, B = A.detach().requires_grad_(), B.detach().requires_grad_()
    dA, dB = torch.autograd.grad(A @ B, (A, B), dC)
    return dA, dB
