"""A right O(N D^3) backward in three sweeps over stored arrays (prefixes, then every adjoint,
then dW), written once for numpy arrays and torch tensors alike."""


def prefix_products_backward(W, dP):
    if W.ndim != 3 or W.shape[1] != W.shape[2]:
        raise ValueError("W must be (N, D, D)")
    if tuple(dP.shape) != tuple(W.shape):
        raise ValueError("dP must have W's shape")
    n = W.shape[0]
    prefixes, adjoints = W * 0, W * 0
    if n == 0:
        return prefixes
    prefixes[0] = W[0]
    for i in range(1, n):
        prefixes[i] = prefixes[i - 1] @ W[i]
    adjoints[n - 1] = dP[n - 1]
    for i in range(n - 2, -1, -1):
        adjoints[i] = dP[i] + adjoints[i + 1] @ W[i + 1].T
    dW = adjoints * 1
    for i in range(1, n):
        dW[i] = prefixes[i - 1].T @ adjoints[i]
    return dW
