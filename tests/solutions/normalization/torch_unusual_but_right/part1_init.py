import math
from types import SimpleNamespace

import torch

ACT = SimpleNamespace(relu=torch.nn.functional.relu, tanh=torch.tanh, linear=lambda z: z)


def _check(*fans):
    for fan in fans:
        if isinstance(fan, bool) or not isinstance(fan, int) or fan < 1:
            raise ValueError(f"fan {fan!r}")


def xavier_init(fan_in, fan_out, rng):
    _check(fan_in, fan_out)
    w = torch.empty(fan_in, fan_out, dtype=torch.float64)
    return w.normal_(0.0, math.sqrt(2.0 / (fan_in + fan_out)), generator=rng)


def he_init(fan_in, fan_out, rng):
    _check(fan_in, fan_out)
    w = torch.empty(fan_out, fan_in, dtype=torch.float64)  # torch's (out, in) layout
    return torch.nn.init.kaiming_normal_(w, nonlinearity="relu", generator=rng).T


def activation_variances(weights, x, activation):
    if activation not in ("relu", "tanh", "linear"):
        raise ValueError(activation)
    if x.dim() != 2:
        raise ValueError("x")
    width = x.size(1)
    for w in weights:
        if w.dim() != 2 or w.size(0) != width:
            raise ValueError("weights do not chain")
        width = w.size(1)
    act, found, h = getattr(ACT, activation), [], x
    for w in weights:
        h = act(torch.matmul(h, w))
        var, _ = torch.var_mean(h, unbiased=False)
        found.append(var)
    return found
