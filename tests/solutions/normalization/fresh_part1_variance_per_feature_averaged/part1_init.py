"""Part 1, numpy reference: Xavier and He initialisation, and the variance of every layer's
activations through a deep stack."""

from __future__ import annotations

from typing import Any

import numpy as np

ACTIVATIONS = ("relu", "tanh", "linear")


def check_fans(fan_in: Any, fan_out: Any) -> None:
    """ValueError unless both fans are positive integers."""
    for name, fan in (("fan_in", fan_in), ("fan_out", fan_out)):
        if isinstance(fan, bool) or not isinstance(fan, int | np.integer) or fan < 1:
            raise ValueError(f"{name} must be a positive integer, got {fan!r}")


def xavier_init(fan_in: int, fan_out: int, rng: np.random.Generator) -> np.ndarray:
    """A (fan_in, fan_out) float64 weight, normal with mean 0 and variance
    2 / (fan_in + fan_out), drawn from rng."""
    check_fans(fan_in, fan_out)
    variance = 2.0 / (fan_in + fan_out)
    std = np.sqrt(variance)
    return rng.standard_normal((fan_in, fan_out)) * std


def he_init(fan_in: int, fan_out: int, rng: np.random.Generator) -> np.ndarray:
    """A (fan_in, fan_out) float64 weight, normal with mean 0 and variance 2 / fan_in, drawn
    from rng."""
    check_fans(fan_in, fan_out)
    variance = 2.0 / fan_in
    std = np.sqrt(variance)
    return rng.standard_normal((fan_in, fan_out)) * std


def activate(z: np.ndarray, activation: str) -> np.ndarray:
    if activation == "relu":
        return np.maximum(z, 0.0)
    if activation == "tanh":
        return np.tanh(z)
    return z


def activation_variances(weights: list[np.ndarray], x: np.ndarray,
                         activation: str) -> list[float]:
    """The variance of every layer's activations, h_l = act(h_{l-1} @ W_l) with h_0 = x: one
    float per layer, np.var over all of h_l's entries."""
    if activation not in ACTIVATIONS:
        raise ValueError(f"activation must be one of {ACTIVATIONS}, got {activation!r}")
    if x.ndim != 2:
        raise ValueError(f"x must be (B, D), got shape {x.shape}")
    width = x.shape[1]
    for index, W in enumerate(weights):
        if W.ndim != 2 or W.shape[0] != width:
            raise ValueError(f"weights[{index}] must be ({width}, n), got {W.shape}")
        width = W.shape[1]
    variances = []
    h = x
    for W in weights:
        z = h @ W
        h = activate(z, activation)
        variances.append(float(h.var(axis=0).mean()))
    return variances
