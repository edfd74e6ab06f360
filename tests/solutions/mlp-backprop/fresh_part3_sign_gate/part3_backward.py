"""Backward through Linear -> ReLU -> Linear, with the ReLU's derivative taken as the sign of
z (+1 above zero, -1 below), spelled with comparisons so that it runs in either library."""


def mlp_backward(params, cache, dlogits):
    X, z, h = cache["X"], cache["z"], cache["h"]
    W2 = params["W2"]
    if tuple(dlogits.shape) != (X.shape[0], W2.shape[1]):
        raise ValueError("dlogits has the wrong shape")
    grad_h = dlogits @ W2.T
    sign = (z > 0) * 1.0 - (z < 0) * 1.0
    grad_z = grad_h * sign
    return {
        "dW1": X.T @ grad_z,
        "db1": grad_z.sum(0),
        "dW2": h.T @ dlogits,
        "db2": dlogits.sum(0),
    }
