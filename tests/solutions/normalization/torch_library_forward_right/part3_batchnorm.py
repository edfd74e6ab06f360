import torch
import torch.nn.functional as F


def batchnorm_forward(x, gamma, beta, running_mean, running_var, momentum=0.1, eps=1e-5,
                      training=True):
    if x.ndim != 2 or any(t.shape != x.shape[1:] for t in (gamma, beta, running_mean,
                                                          running_var)):
        raise ValueError("x must be (N, D) and the rest (D,)")
    if not 0 <= momentum <= 1 or eps < 0:
        raise ValueError("momentum in [0, 1], eps >= 0")
    if training and x.shape[0] < 2:
        raise ValueError("a batch of one has no variance")
    mean, var = running_mean.clone(), running_var.clone()
    y = F.batch_norm(x, mean, var, gamma, beta, training, momentum, eps)
    saved = {"x": x.clone(), "gamma": gamma.clone(), "eps": eps, "training": training,
             "mean": running_mean.clone(), "var": running_var.clone()}
    return y, saved, mean, var


def batchnorm_backward(dy, cache):
    x, gamma, eps = cache["x"], cache["gamma"], cache["eps"]
    if dy.shape != x.shape:
        raise ValueError("dy must have x's shape")
    if cache["training"]:
        mean, var = x.mean(0), x.var(0, unbiased=False)
    else:
        mean, var = cache["mean"], cache["var"]
    istd = (var + eps).rsqrt()
    xhat = (x - mean) * istd
    g = dy * gamma
    if cache["training"]:
        g = g - g.mean(0) - xhat * (g * xhat).mean(0)
    return g * istd, (dy * xhat).sum(0), dy.sum(0)
