import numpy as np

def mlp_backward(params, cache, dlogits):
    X = cache["X"]
    if dlogits.shape != (X.shape[0], params["W2"].shape[1]):
        raise ValueError("dlogits shape")
    def loss(p):
        z = X @ p["W1"] + p["b1"]
        h = np.maximum(z, 0)
        return float((dlogits * (h @ p["W2"] + p["b2"])).sum())
    grads = {}
    h = 1e-6
    for name in ("W1", "b1", "W2", "b2"):
        g = np.zeros_like(params[name], dtype=np.float64)
        for idx in np.ndindex(*params[name].shape):
            up = {k: v.astype(np.float64) for k, v in params.items()}
            dn = {k: v.astype(np.float64) for k, v in params.items()}
            up[name][idx] += h; dn[name][idx] -= h
            g[idx] = (loss(up) - loss(dn)) / (2 * h)
        grads["d" + name] = g.astype(params[name].dtype)
    return grads
