"""The exact gradients of the gradient-check round's test functions: the judge's side only.

The candidate's process is handed an f (functions.py) and, for Part 3, the values of a claimed
gradient that the judge computed here; it never holds this module, so no function it can reach
estimates or checks a gradient for it. Written like functions.py, for numpy arrays and torch
tensors alike, in x's dtype.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from grader.round_api.judge import Round, load_module

FUNCTIONS = load_module(Round.load(Path(__file__).resolve().parent), "functions")
Spec = dict[str, Any]
_like, _flat, _xp, _prefixes = FUNCTIONS._like, FUNCTIONS._flat, FUNCTIONS._xp, FUNCTIONS._prefixes
_product = FUNCTIONS._product


def _quadratic_grad(spec: Spec, x: Any) -> Any:
    A, v = _like(spec["A"], x), _flat(x)
    return (0.5 * (A @ v + A.T @ v)).reshape(x.shape)


def _product_grad(spec: Spec, x: Any) -> Any:
    """prod(x) / x_i: the specs keep every entry away from zero."""
    return _product(spec, x) / x


def _logsumexp_grad(spec: Spec, x: Any) -> Any:
    e = _xp(x).exp(x - _flat(x).max())
    return e / e.sum()


def _cubic_grad(spec: Spec, x: Any) -> Any:
    return 3 * _like(spec["c"], x) * x * x


def _relu_grad(spec: Spec, x: Any) -> Any:
    """w where x > 0, else 0 (the usual convention at the kink x = 0)."""
    return _like(spec["w"], x) * (x > 0)


def _abs_grad(spec: Spec, x: Any) -> Any:
    return _like(spec["w"], x) * _xp(x).sign(x)


def _prefix_loss_grad(spec: Spec, x: Any) -> Any:
    """dW by the reverse sweep: adjoint += dP[i]; dW[i] = P[i-1]^T adjoint; adjoint @= W[i]^T."""
    dP = _like(spec["dP"], x)
    P = _prefixes(x)
    dW = _xp(x).zeros_like(x)
    adjoint = dP[0] * 0
    for i in range(x.shape[0] - 1, -1, -1):
        adjoint = adjoint + dP[i]
        dW[i] = P[i - 1].T @ adjoint if i > 0 else adjoint
        adjoint = adjoint @ x[i].T
    return dW


GRADIENTS: dict[str, Callable[[Spec, Any], Any]] = {
    "quadratic": _quadratic_grad,
    "product": _product_grad,
    "logsumexp": _logsumexp_grad,
    "cubic": _cubic_grad,
    "relu": _relu_grad,
    "abs": _abs_grad,
    "prefix-products loss": _prefix_loss_grad,
}


def gradient(spec: Spec, x: Any, wrong: list[dict[str, Any]] | None = None) -> Any:
    """The exact gradient of f at x; `wrong` entries ({"index", "value"}) replace entries of
    it (a gradient with a known bug, for Part 3)."""
    grad = GRADIENTS[spec["kind"]](spec, x)
    for bug in wrong or ():
        grad[tuple(bug["index"])] = bug["value"]
    return grad
