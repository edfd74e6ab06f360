import torch


def batchnorm_forward(x, gamma, beta, running_mean, running_var, momentum=0.1, eps=1e-5,
                      training=True):
    if x.dim() != 2:
        raise ValueError("x")
    d = x.shape[1]
    for t in (gamma, beta, running_mean, running_var):
        if list(t.shape) != [d]:
            raise ValueError("per-feature shape")
    if momentum < 0 or momentum > 1 or eps < 0:
        raise ValueError("momentum or eps")
    if training:
        n = x.shape[0]
        if n <= 1:
            raise ValueError("a batch of one")
        var, mean = torch.var_mean(x, dim=0, unbiased=False)
        running_mean = torch.lerp(running_mean, mean, momentum)
        running_var = torch.lerp(running_var, var * n / (n - 1), momentum)
    else:
        mean, var = running_mean, running_var
        running_mean, running_var = running_mean.clone(), running_var.clone()
    rstd = (var + eps).rsqrt()
    xhat = (x - mean) * rstd
    return xhat * gamma + beta, (training, xhat, rstd, gamma.clone()), running_mean, running_var


def batchnorm_backward(dy, cache):
    training, xhat, rstd, gamma = cache
    if dy.shape != xhat.shape:
        raise ValueError("dy")
    dgamma, dbeta = (dy * xhat).sum(0), dy.sum(0)
    g = dy * gamma
    if not training:
        return g * rstd, dgamma, dbeta
    n = dy.shape[0]
    return rstd / n * (n * g - g.sum(0) - xhat * (g * xhat).sum(0)), dgamma, dbeta
