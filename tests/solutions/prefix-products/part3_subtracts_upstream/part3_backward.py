"""Buggy: the upstream gradient is subtracted from the running adjoint instead of added.
Written its own way (a suffix accumulator named g, the prefix chain built inline), not as a
copy of the reference, so only the outputs can tell what the slip is."""


def prefix_products_backward(W, dP):
    if W.ndim != 3 or W.shape[1] != W.shape[2] or dP.shape != W.shape:
        raise ValueError("W and dP must both be (N, D, D)")
    n = W.shape[0]
    chain = []
    running = None
    for k in range(n):
        running = W[k] if running is None else running @ W[k]
        chain.append(running)
    grads = W * 0
    g = W.sum(0) * 0
    for k in reversed(range(n)):
        g = g - dP[k]
        grads[k] = (chain[k - 1].T if k else _eye_like(W)) @ g
        g = g @ W[k].T
    return grads


def _eye_like(W):
    out = W[0] * 0
    for j in range(W.shape[1]):
        out[j, j] = 1
    return out
