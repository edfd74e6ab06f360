"""Part 1: Xavier and He initialisation, and what they do to a deep stack (numpy flavor).

A layer z = h @ W with W of shape (fan_in, fan_out) sums fan_in products, so the scale of W's
entries decides whether activations grow, shrink or stay put from layer to layer. Write the two
classic initialisers, both NORMAL with mean 0:

    xavier_init: Var(W) = 2 / (fan_in + fan_out)     (Glorot, for tanh / linear layers)
    he_init:     Var(W) = 2 / fan_in                 (Kaiming, for ReLU layers)

and activation_variances, which measures what a stack of layers does to the signal.

How it is graded: the initialisers are sampled on large shapes and their mean, variance and
shape of distribution checked statistically, with bands a correct sampler passes at every seed
(the chance of a false failure is below 1e-9); the same seed twice must give the same weight.

Run `grader check part1` to grade this file; `grader hint part1` when stuck.
"""

from __future__ import annotations

import numpy as np


def xavier_init(fan_in: int, fan_out: int, rng: np.random.Generator) -> np.ndarray:
    """Return a (fan_in, fan_out) float64 weight, normal, mean 0, variance 2 / (fan_in + fan_out).

    Draw only from rng, so that the caller's seed decides the result:
    rng.standard_normal((fan_in, fan_out)).
    Raises ValueError unless fan_in and fan_out are integers >= 1.
    """
    raise NotImplementedError("Part 1: write xavier_init")


def he_init(fan_in: int, fan_out: int, rng: np.random.Generator) -> np.ndarray:
    """Return a (fan_in, fan_out) float64 weight, normal, mean 0, variance 2 / fan_in.

    Draw only from rng. Raises ValueError unless fan_in and fan_out are integers >= 1.
    """
    raise NotImplementedError("Part 1: write he_init")


def activation_variances(weights: list[np.ndarray], x: np.ndarray, activation: str) -> list[float]:
    """The variance of every layer's activations through the stack, one float per layer.

    h_0 = x (B, D); for each W in weights (in order), h_l = act(h_{l-1} @ W_l) with act one of
    "relu" (max(z, 0)), "tanh" or "linear" (the identity), applied at every layer, the last
    too. Record the variance of ALL of h_l's entries together, biased (np.var(h)), after the
    activation. The input's own variance is not in the list: len(result) == len(weights).
    Raises ValueError for an unknown activation, an x that is not 2-D, or weights that do not
    chain (weights[0] is (D, n1), weights[1] is (n1, n2), ...). Leaves weights and x unchanged.
    """
    raise NotImplementedError("Part 1: write activation_variances")
