import numpy as np


def mlp_backward(params, cache, dlogits):
    X, z, h = cache["X"], cache["z"], cache["h"]
    W2 = params["W2"]
    if dlogits.shape != (X.shape[0], W2.shape[1]):
        raise ValueError("dlogits has the wrong shape")
    dh = dlogits @ W2.T
    dz = dh * (z > 0)
    H = z.shape[1]
    dW1 = np.zeros((X.shape[1], H), dtype=X.dtype)
    dW2 = np.zeros((H, dlogits.shape[1]), dtype=X.dtype)
    for i in range(X.shape[0]):
        dW1 += np.outer(X[i], dz[i])
        dW2 = np.outer(h[i], dlogits[i])
    return {"dW1": dW1, "db1": dz.sum(axis=0), "dW2": dW2, "db2": dlogits.sum(axis=0)}
