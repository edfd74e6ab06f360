"""Part 3: BatchNorm, training and evaluation, forward and backward by hand (numpy flavor).

BatchNorm normalises each FEATURE over the batch (axis 0 of x, shape (N, D)), as
torch.nn.functional.batch_norm does:

training=True:
    mean = x.mean over the batch, var = biased batch variance (divide by N)
    xhat = (x - mean) / sqrt(var + eps)                    (eps INSIDE the square root)
    new_running_mean = (1 - momentum) * running_mean + momentum * mean
    new_running_var  = (1 - momentum) * running_var  + momentum * var * N / (N - 1)
                       (torch's convention: the running variance keeps the UNBIASED estimate)
training=False (evaluation):
    xhat = (x - running_mean) / sqrt(running_var + eps)
    the running statistics are used, never updated: they come back as they were
both:
    y = gamma * xhat + beta

How it is graded: against torch's batch_norm (and autograd) in float64, over many shapes,
momenta and eps, in float64 and float32, in both modes and over several training steps; the
backward also against central finite differences. The backward checks call YOUR
batchnorm_forward to get the cache, in your format.

Run `grader check part3` to grade this file; `grader hint part3` when stuck.
"""

from __future__ import annotations

from typing import Any

import numpy as np


def batchnorm_forward(x: np.ndarray, gamma: np.ndarray, beta: np.ndarray,
                      running_mean: np.ndarray, running_var: np.ndarray,
                      momentum: float = 0.1, eps: float = 1e-5, training: bool = True
                      ) -> tuple[np.ndarray, Any, np.ndarray, np.ndarray]:
    """Return (y, cache, new_running_mean, new_running_var).

    y has x's shape and dtype; the running statistics are (D,), NEW arrays in training (the
    ones passed in are never modified, in place or otherwise), the same values in evaluation.
    The cache is yours to design: what the backward needs (xhat, std, gamma, and the mode).
    Raises ValueError when x is not (N, D), gamma, beta, running_mean or running_var is not
    (D,), momentum is outside [0, 1], eps < 0, or training with N < 2.
    """
    raise NotImplementedError("Part 3: write batchnorm_forward")


def batchnorm_backward(dy: np.ndarray, cache: Any
                       ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Return (dx, dgamma, dbeta) for the forward that made this cache.

    In training the batch's mean and variance depend on every x of the batch (dx has two
    extra terms); in evaluation the running statistics are constants. dgamma and dbeta are
    (D,), summed over the batch. Raises ValueError when dy is not x's shape. Must not modify
    dy or the cache, and must not call autograd.
    """
    raise NotImplementedError("Part 3: write batchnorm_backward")
