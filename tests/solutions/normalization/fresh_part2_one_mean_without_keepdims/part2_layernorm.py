import numpy as np


def check_affine(x, gamma, beta, eps):
    if x.ndim < 2 or gamma.shape != (x.shape[-1],) or beta.shape != (x.shape[-1],):
        raise ValueError("gamma and beta must be (D,) for x of shape (..., D)")
    if not eps >= 0:
        raise ValueError("eps must be >= 0")


def layernorm_forward(x, gamma, beta, eps=1e-5):
    check_affine(x, gamma, beta, eps)
    mu = np.mean(x, axis=-1, keepdims=True)
    xc = x - mu
    sigma2 = np.mean(xc * xc, axis=-1, keepdims=True)
    inv = 1.0 / np.sqrt(sigma2 + eps)
    xhat = xc * inv
    return gamma * xhat + beta, {"xhat": xhat, "inv": inv, "gamma": gamma.copy()}


def layernorm_backward(dy, cache):
    xhat, inv, gamma = cache["xhat"], cache["inv"], cache["gamma"]
    lead = tuple(range(dy.ndim - 1))
    dgamma = (dy * xhat).sum(axis=lead)
    dbeta = dy.sum(axis=lead)
    g = dy * gamma
    m1 = g.mean(axis=-1)
    m2 = (g * xhat).mean(axis=-1, keepdims=True)
    dx = inv * (g - m1 - xhat * m2)
    return dx, dgamma, dbeta
