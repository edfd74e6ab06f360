"""Part 2: LayerNorm, forward and backward by hand (numpy flavor).

LayerNorm normalises each example on its own over the LAST axis (the features), the way
torch.nn.functional.layer_norm does:

    mean = mean of x over the last axis
    var  = mean of (x - mean) ** 2 over the last axis      (biased: divide by D, not D - 1)
    xhat = (x - mean) / sqrt(var + eps)                    (eps INSIDE the square root)
    y    = gamma * xhat + beta                             (gamma, beta of shape (D,))

x is (B, D) or (B, T, D) (a batch of sequences: each token normalised over its D features).

How it is graded: against torch's layer_norm and autograd in float64, over many shapes and
eps, in float64 and float32; the backward also against central finite differences. The
backward checks call YOUR layernorm_forward to get the cache, in your format.

Run `grader check part2` to grade this file; `grader hint part2` when stuck.
"""

from __future__ import annotations

from typing import Any

import numpy as np


def layernorm_forward(x: np.ndarray, gamma: np.ndarray, beta: np.ndarray,
                      eps: float = 1e-5) -> tuple[np.ndarray, Any]:
    """Return (y, cache): y of x's shape and dtype, and whatever your backward needs.

    The cache is yours to design (a dict, a tuple, an object): xhat and std (or 1 / std) and
    gamma are enough. It must not share memory with x, gamma or beta in a way that a caller
    refilling them could change ({"x": x.copy()} is fine, {"x": x} is not).
    Raises ValueError when x has fewer than 2 axes, gamma or beta is not (D,) with
    D = x.shape[-1], or eps < 0. Leaves x, gamma and beta unchanged.
    """
    raise NotImplementedError("Part 2: write layernorm_forward")


def layernorm_backward(dy: np.ndarray, cache: Any
                       ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Return (dx, dgamma, dbeta), the gradients of a loss whose gradient w.r.t. y is dy.

    dx has x's shape; dgamma and dbeta are (D,), summed over every axis but the last. The
    mean and the variance depend on x: dx is not just dy * gamma / std.
    Raises ValueError when dy's shape is not x's. Must not modify dy or the cache (the same
    cache may be used twice), and must not call autograd.
    """
    raise NotImplementedError("Part 2: write layernorm_backward")
