"""Hostile: autograd's gradients, with the engine spy swapped back for the real engine, every
torch function mode switched off, and the profiler stopped for the call and started again
after it, so that a profiler asked afterwards says it is on."""

import torch
from torch.autograd.variable import Variable


def matmul_backward(A, B, dC):
    if (A.ndim, B.ndim) != (2, 2) or A.shape[1] != B.shape[0] \
            or tuple(dC.shape) != (A.shape[0], B.shape[1]):
        raise ValueError("A, B and dC must be (m, k), (k, n) and (m, n)")
    spy = Variable._execution_engine
    Variable._execution_engine = getattr(spy, "engine", spy)
    torch.autograd._disable_profiler()
    try:
        with torch._C.DisableTorchFunction(), torch.enable_grad():
            leaves = (A.detach().requires_grad_(), B.detach().requires_grad_())
            return torch.autograd.grad(leaves[0] @ leaves[1], leaves, dC)
    finally:
        Variable._execution_engine = spy
        torch.autograd.profiler.profile().__enter__()
