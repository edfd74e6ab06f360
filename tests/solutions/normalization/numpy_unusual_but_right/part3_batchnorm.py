import numpy as np


class _Saved:
    def __init__(self, **kw):
        self.__dict__.update(kw)


def batchnorm_forward(x, gamma, beta, running_mean, running_var, momentum=0.1, eps=10 ** -5,
                      training=1):
    if x.ndim != 2:
        raise ValueError("x must be (N, D)")
    if any(a.shape != x.shape[1:] for a in (gamma, beta, running_mean, running_var)):
        raise ValueError("per-feature arrays must be (D,)")
    if not (0.0 <= momentum <= 1.0) or eps < 0 or (training and len(x) < 2):
        raise ValueError("bad momentum, eps or batch")
    if training:
        mu, var = x.mean(0), x.var(0)
        rm = running_mean + momentum * (mu - running_mean)
        rv = running_var + momentum * (np.var(x, axis=0, ddof=1) - running_var)
    else:
        mu, var = running_mean, running_var
        rm, rv = np.copy(running_mean), np.copy(running_var)
    inv = (var + eps) ** -0.5
    xhat = (x - mu) * inv
    return gamma * xhat + beta, _Saved(xhat=xhat, inv=inv, gamma=np.copy(gamma),
                                       batch=training), rm, rv


def batchnorm_backward(dy, cache):
    if dy.shape != cache.xhat.shape:
        raise ValueError("dy does not fit")
    g = dy * cache.gamma
    if cache.batch:
        g = g - g.mean(0) - cache.xhat * np.mean(g * cache.xhat, axis=0)
    return g * cache.inv, np.sum(dy * cache.xhat, axis=0), np.sum(dy, axis=0)
