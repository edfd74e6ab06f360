"""Hostile Part 3: an O(N^2 D^3) backward run, for the large sizes, in a grandchild started with SIGCHLD ignored, so that the kernel reaps it and its CPU time is charged to nobody; where it cannot fork, the same slow code in process."""
from __future__ import annotations
import os
import signal
import numpy as np
from .part2_out_of_place import prefix_products


def _slow(W, dP):
    n, d, _ = W.shape
    P = prefix_products(W)
    dW = np.empty_like(W)
    for j in range(n):
        left = P[j - 1] if j > 0 else np.eye(d, dtype=W.dtype)
        acc = np.zeros((d, d), dtype=W.dtype)
        S = np.eye(d, dtype=W.dtype)
        for i in range(j, n):
            if i > j:
                S = S @ W[i]
            acc = acc + dP[i] @ S.T
        dW[j] = left.T @ acc
    return dW


def prefix_products_backward(W, dP):
    if W.ndim != 3 or W.shape[1] != W.shape[2]:
        raise ValueError(f"W must have shape (N, D, D), got {W.shape}")
    if dP.shape != W.shape:
        raise ValueError("dP shape")
    Wp = np.array(W, copy=True).view(np.ndarray)
    dPp = np.array(dP, copy=True).view(np.ndarray)
    if W.shape[0] < 32:
        return _slow(Wp, dPp)
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)   # children auto-reaped: their rusage is dropped
    r, w = os.pipe()
    try:
        pid = os.fork()
    except OSError:
        os.close(r); os.close(w)
        return _slow(Wp, dPp)
    if pid == 0:
        os.close(r)
        try:
            out = np.ascontiguousarray(_slow(Wp, dPp)).tobytes()
            view = memoryview(out)
            while view:
                k = os.write(w, view)
                view = view[k:]
        finally:
            os._exit(0)
    os.close(w)
    chunks = []
    while True:
        b = os.read(r, 1 << 20)
        if not b:
            break
        chunks.append(b)
    os.close(r)
    return np.frombuffer(b"".join(chunks), dtype=Wp.dtype).reshape(Wp.shape).copy()
