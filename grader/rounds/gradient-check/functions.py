"""The test functions of the gradient-check round: f(x) from plain data, on both sides.

A function is named by a spec, e.g. {"kind": "quadratic", "A": array}. The probes build the f a
candidate's code is given from it (in the child, on the flavor's arrays); the judge evaluates
the same spec in float64. Their exact gradients are the judge's alone (gradients.py): the
candidate's side never holds code that computes a gradient, and a grad_f handed to the
candidate returns values the judge computed.

Every function is written once for numpy arrays and torch tensors alike: it uses only
operations the two share, with the spec's arrays cast to x's dtype, so a float32 x is
evaluated in float32 (which is what makes a float32 check meaningless at eps = 1e-6).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

Spec = dict[str, Any]


def _xp(x: Any) -> Any:
    """numpy or torch, whichever x belongs to."""
    if isinstance(x, np.ndarray | np.generic):
        return np
    import torch

    return torch


def _like(a: Any, x: Any) -> Any:
    """A spec array as x's kind of array, in x's dtype."""
    if _xp(x) is np:
        return np.asarray(a, dtype=x.dtype)
    import torch

    return torch.as_tensor(np.asarray(a), dtype=x.dtype, device=x.device)


def _flat(x: Any) -> Any:
    return x.reshape(-1)


# --- f(x): a scalar of x's kind (a numpy scalar, a 0-d tensor) ----------------------------------


def _quadratic(spec: Spec, x: Any) -> Any:
    v = _flat(x)
    return 0.5 * (v * (_like(spec["A"], x) @ v)).sum()


def _product(spec: Spec, x: Any) -> Any:
    return _xp(x).prod(_flat(x))


def _logsumexp(spec: Spec, x: Any) -> Any:
    v = _flat(x)
    top = v.max()
    return top + _xp(x).log(_xp(x).exp(v - top).sum())


def _cubic(spec: Spec, x: Any) -> Any:
    return (_like(spec["c"], x) * x * x * x).sum()


def _relu(spec: Spec, x: Any) -> Any:
    return (_like(spec["w"], x) * x * (x > 0)).sum()


def _abs(spec: Spec, x: Any) -> Any:
    return (_like(spec["w"], x) * _xp(x).abs(x)).sum()


def _prefixes(W: Any) -> list[Any]:
    """P[i] = W[0] @ ... @ W[i]."""
    products = [W[0]]
    for i in range(1, W.shape[0]):
        products.append(products[-1] @ W[i])
    return products


def _prefix_loss(spec: Spec, x: Any) -> Any:
    """The first round's loss: sum(P * dP) with P[i] = W[0] @ ... @ W[i]; x is W, (N, D, D)."""
    dP = _like(spec["dP"], x)
    return sum((P * dP[i]).sum() for i, P in enumerate(_prefixes(x)))


VALUES: dict[str, Callable[[Spec, Any], Any]] = {
    "quadratic": _quadratic,
    "product": _product,
    "logsumexp": _logsumexp,
    "cubic": _cubic,
    "relu": _relu,
    "abs": _abs,
    "prefix-products loss": _prefix_loss,
}


def value(spec: Spec, x: Any) -> Any:
    """f(x) for the function `spec` names."""
    return VALUES[spec["kind"]](spec, x)


# --- strided views: how a probe and the judge cut the same view out of a base array -----------


def apply_view(base: Any, view: Sequence[Any]) -> Any:
    """base[slices].permute(order): `view` is (slices as [start, stop, step] triples, order)."""
    slices, order = view
    cut = base[tuple(slice(*s) for s in slices)]
    return cut.transpose(*order) if _xp(base) is np else cut.permute(*order)
