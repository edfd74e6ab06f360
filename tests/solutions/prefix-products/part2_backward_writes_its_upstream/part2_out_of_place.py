"""Buggy: a custom autograd.Function whose backward sweeps the running adjoint through the
gradient it received, in place. Its values and gradient are right, but the caller's G is
changed by P.backward(G), and P.sum().backward() raises (its G is one expanded tensor)."""

import torch


class _Prefix(torch.autograd.Function):
    @staticmethod
    def forward(ctx, W):
        products = [W[0]]
        for i in range(1, W.shape[0]):
            products.append(products[-1] @ W[i])
        P = torch.stack(products)
        ctx.save_for_backward(W, P)
        return P

    @staticmethod
    def backward(ctx, grad):
        W, P = ctx.saved_tensors
        n, d, _ = W.shape
        dW = torch.empty_like(W)
        for i in range(n - 1, -1, -1):
            if i < n - 1:
                grad[i] += grad[i + 1] @ W[i + 1].T
            left = P[i - 1] if i > 0 else torch.eye(d, dtype=W.dtype)
            dW[i] = left.T @ grad[i]
        return dW


def prefix_products(W):
    if W.ndim != 3 or W.shape[1] != W.shape[2]:
        raise ValueError(f"W must have shape (N, D, D), got {tuple(W.shape)}")
    if W.shape[0] == 0:
        return W.clone()
    return _Prefix.apply(W)
