import numpy as np

_ACTIVATIONS = {"relu": lambda z: z * (z > 0), "tanh": np.tanh, "linear": lambda z: z}


def _fans(*fans):
    for fan in fans:
        if type(fan) is bool or not isinstance(fan, (int, np.integer)) or fan <= 0:
            raise ValueError(f"bad fan {fan!r}")


def xavier_init(fan_in, fan_out, rng):
    _fans(fan_in, fan_out)
    return rng.normal(0.0, np.sqrt(2.0 / (fan_in + fan_out)), size=(fan_in, fan_out))


def he_init(fan_in, fan_out, rng):
    _fans(fan_in, fan_out)
    return rng.normal(loc=0.0, scale=(2.0 / fan_in) ** 0.5, size=(fan_in, fan_out))


def activation_variances(weights, x, activation):
    try:
        act = _ACTIVATIONS[activation]
    except (KeyError, TypeError):
        raise ValueError(activation) from None
    if np.ndim(x) != 2:
        raise ValueError("x must be 2-D")
    shapes = [x.shape[1]] + [w.shape[-1] for w in weights]
    if any(np.ndim(w) != 2 or w.shape[0] != shapes[i] for i, w in enumerate(weights)):
        raise ValueError("weights do not chain")
    out = np.empty(len(weights))
    h = x
    for i, w in enumerate(weights):
        h = act(np.einsum("bi,io->bo", h, w))
        out[i] = np.mean((h - h.mean()) ** 2)
    return out
