"""Hostile: no Function at all, matmul raising an error that carries torch's words for a
refused double backward."""

import torch


class MatMul(torch.autograd.Function):
    pass


def matmul(A, B):
    raise RuntimeError("trying to differentiate twice a function that was marked with "
                       "@once_differentiable")
