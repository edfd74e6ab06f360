import numpy as np


def layernorm_forward(x, gamma, beta, eps=1e-5):
    if x.ndim < 2 or gamma.shape != x.shape[-1:] or beta.shape != x.shape[-1:] or eps < 0:
        raise ValueError("shapes do not fit")
    inv_std = 1.0 / np.sqrt(np.var(x, axis=-1, keepdims=True) + eps)
    xhat = (x - np.mean(x, axis=-1, keepdims=True)) * inv_std
    return np.einsum("...d,d->...d", xhat, gamma) + beta, (xhat, inv_std, np.array(gamma))


def layernorm_backward(dy, cache):
    xhat, inv_std, gamma = cache
    if dy.shape != xhat.shape:
        raise ValueError("dy does not fit")
    d = xhat.shape[-1]
    flat_dy, flat_xhat = dy.reshape(-1, d), xhat.reshape(-1, d)
    dgamma = np.einsum("nd,nd->d", flat_dy, flat_xhat)
    dbeta = flat_dy.sum(0)
    g = dy * gamma
    dx = inv_std / d * (d * g - g.sum(-1, keepdims=True)
                        - xhat * np.einsum("...d,...d->...", g, xhat)[..., None])
    return dx, dgamma, dbeta
