"""Backward through Linear -> ReLU -> Linear, with the ReLU's derivative taken as sign(z)."""

import numpy as np


def mlp_backward(params, cache, dlogits):
    X, z, h = cache["X"], cache["z"], cache["h"]
    W2 = params["W2"]
    if dlogits.shape != (X.shape[0], W2.shape[1]):
        raise ValueError("dlogits has the wrong shape")
    grad_h = dlogits @ W2.T
    grad_z = grad_h * np.sign(z)
    return {
        "dW1": X.T @ grad_z,
        "db1": grad_z.sum(axis=0),
        "dW2": h.T @ dlogits,
        "db2": dlogits.sum(axis=0),
    }
