"""Hostile: wrong (the adjoint never accumulates), and each call waits in the kernel's
uninterruptible sleep ("D") for ever at no CPU cost: membarrier(MEMBARRIER_CMD_GLOBAL) in a
loop. A wait that reads as work would reach the clock's backstop as starved and leave the
check undecided; it is idle, and times out."""

import ctypes
import platform

import numpy as np

_SYS_MEMBARRIER = {"x86_64": 324, "aarch64": 283}.get(platform.machine(), -1)
_libc = ctypes.CDLL(None, use_errno=True)


def prefix_products_backward(W, dP):
    while True:
        _libc.syscall(_SYS_MEMBARRIER, 1, 0, 0)
    n, d, _ = W.shape
    dW = np.empty_like(W)
    prefix = np.eye(d, dtype=W.dtype)
    for i in range(n):
        dW[i] = prefix.T @ dP[i]
        prefix = prefix @ W[i]
    return dW
