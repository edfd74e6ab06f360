"""The numpy backward handed to torch: the recurrence rebuilt on tensors and differentiated by
autograd, the gradients turned back into arrays. Right values, not by hand."""

from __future__ import annotations

import numpy as np
import torch


def recurrence_backward(a, h0, h, dh):
    if a.ndim != 2 or h.shape != a.shape or dh.shape != a.shape or h0.shape != (a.shape[1],):
        raise ValueError("a, h and dh must be (T, D) and h0 (D,)")
    if a.shape[0] == 0:
        return np.zeros_like(a), np.zeros_like(a), np.zeros_like(h0)
    b = h - a * np.concatenate([h0[None], h[:-1]])
    ta, tb, th0 = (torch.tensor(v, requires_grad=True) for v in (a, b, h0))
    state, rows = th0, []
    for t in range(a.shape[0]):
        state = ta[t] * state + tb[t]
        rows.append(state)
    da, db, dh0 = torch.autograd.grad(torch.stack(rows), (ta, tb, th0), torch.tensor(dh))
    return da.numpy(), db.numpy(), dh0.numpy()
