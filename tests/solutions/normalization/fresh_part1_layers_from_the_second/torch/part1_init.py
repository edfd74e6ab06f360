import math
import torch

def _fans_ok(*fans):
    for f in fans:
        if isinstance(f, bool) or not isinstance(f, int) or f < 1:
            raise ValueError(f"fan must be a positive int, got {f!r}")

def xavier_init(fan_in, fan_out, rng):
    _fans_ok(fan_in, fan_out)
    return torch.randn((fan_in, fan_out), generator=rng, dtype=torch.float64).mul_(math.sqrt(2.0 / (fan_in + fan_out)))

def he_init(fan_in, fan_out, rng):
    _fans_ok(fan_in, fan_out)
    return torch.randn((fan_in, fan_out), generator=rng, dtype=torch.float64).mul_(math.sqrt(2.0 / fan_in))

def activation_variances(weights, x, activation):
    if activation not in ("relu", "tanh", "linear"):
        raise ValueError(activation)
    if x.dim() != 2:
        raise ValueError("x must be (B, D)")
    d = x.shape[1]
    for i, W in enumerate(weights):
        if W.dim() != 2 or W.shape[0] != d:
            raise ValueError(f"weights[{i}] bad shape {tuple(W.shape)}")
        d = W.shape[1]
    h = x
    res = []
    for W in weights[1:]:
        z = h @ W
        h = torch.relu(z) if activation == "relu" else torch.tanh(z) if activation == "tanh" else z
        res.append(h.var(unbiased=False).item())
    return res
