"""Autograd-facing probes shared by parts 2-4: gradients through candidate code, gradcheck of a
custom torch.autograd.Function, and the reading of torch's autograd errors.

torch functions are bound when a plan is built (in the worker, before any candidate import), so
an exercise file that reassigns `torch.autograd.gradcheck` does not change what the probe calls.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import cache
from typing import Any

import numpy as np

from grader.checks.api import Api

# (`grader explain` topic, pattern, what happened, what to do): matched against torch's message
# with a regex, since the exact wording (and its "Hint: ..." tail) changes between torch versions.
AUTOGRAD_ERRORS: tuple[tuple[str, str, str, str], ...] = (
    (
        "version-counter",
        r"modified by an inplace operation",
        "autograd's version-counter error: a tensor that a matmul saved for backward was "
        "written in place afterwards (P[i] = P[i-1] @ W[i] into one preallocated P saves a view "
        "of P[i-1], and the write to the next slot bumps the version of the whole buffer).",
        "Build P out-of-place: keep each product as a new tensor in a list and torch.stack "
        "them (or wrap the in-place kernel in a custom Function that calls ctx.mark_dirty). "
        "`grader explain version-counter` shows it live.",
    ),
    (
        "leaf-inplace",
        r"leaf Variable that requires grad is being used in an in-place operation",
        "you wrote in place into W (or a view of it), a leaf tensor that requires grad; "
        "autograd forbids that because W's own gradient would be lost.",
        "Never write into W: allocate the result separately. `grader explain leaf-inplace`.",
    ),
    (
        "detached-graph",
        r"does not require grad and does not have a grad_fn|element 0 of tensors does not require",
        "the result is not connected to W's autograd graph (a detach(), .data, torch.no_grad or "
        "a numpy round trip cut it).",
        "Compute P with torch operations on W itself, outside torch.no_grad(). "
        "`grader explain detached-graph`.",
    ),
)


def _known_error(message: str) -> tuple[str, str, str, str] | None:
    return next((entry for entry in AUTOGRAD_ERRORS if re.search(entry[1], message)), None)


def explain_autograd_error(message: str) -> tuple[str, str] | None:
    """(what happened, what to do) for a known autograd error message."""
    known = _known_error(message)
    return (known[2], known[3]) if known else None


def autograd_error_topic(message: str) -> str | None:
    """The `grader explain` topic of a known autograd error message."""
    known = _known_error(message)
    return known[0] if known else None


def first_line(message: str, limit: int = 300) -> str:
    line = message.strip().splitlines()[0] if message.strip() else ""
    return line if len(line) <= limit else line[:limit] + " ..."


def gradient_through(api: Api, forward: Callable[[Any], Any], W: np.ndarray,
                     upstream: np.ndarray) -> dict[str, Any]:
    """Differentiate sum(forward(W) * upstream) with torch autograd; plain data back."""
    import torch

    leaf = torch.from_numpy(W.copy()).requires_grad_()
    value, raised = api.call(forward, leaf)
    if raised is not None:
        return {"stage": "forward", "raised": raised.as_dict()}
    P = api.backend.to_tensor(value)
    if not P.requires_grad:
        return {"stage": "detached"}
    _, raised = api.call(lambda: (P * torch.from_numpy(upstream)).sum().backward())
    if raised is not None:
        return {"stage": "backward", "raised": raised.as_dict()}
    if leaf.grad is None:
        return {"stage": "no_grad"}
    return {"stage": "ok", "grad": leaf.grad.detach().numpy().copy()}


@cache
def bound_gradcheck() -> Callable[..., Any]:
    """torch.autograd.gradcheck, bound in the worker (so an exercise file that patches it changes
    nothing) and called once there: its first call imports a good deal of torch (about 0.3 s),
    which every child forked afterwards inherits instead of paying again."""
    import torch

    gradcheck = torch.autograd.gradcheck
    warm = torch.ones((1,), dtype=torch.float64, requires_grad=True)
    gradcheck(lambda x: x * x, (warm,))
    return gradcheck


def run_gradcheck(api: Api, gradcheck: Callable[..., Any], fn: Callable[[Any], Any],
                  W: np.ndarray) -> dict[str, Any]:
    """torch.autograd.gradcheck in float64, slow mode (the inputs here are small)."""
    import torch

    leaf = torch.from_numpy(W.astype(np.float64)).requires_grad_()
    _, raised = api.call(lambda: gradcheck(fn, (leaf,), eps=1e-6, atol=1e-5, rtol=1e-3,
                                           fast_mode=False))
    return {"ok": raised is None, "raised": raised.as_dict() if raised else None}


def custom_function(api: Api, forward: Callable[[Any], tuple[Any, Any]],
                    backward: Callable[[Any, Any, Any], Any]) -> Callable[[Any], Any]:
    """A torch.autograd.Function (forward / setup_context / backward) around the given pieces.

    forward(W) -> (P, saved) in torch tensors; backward(W, saved, dP) -> dW. Whatever the
    flavor, the Function speaks torch, so gradcheck can drive it.
    """
    import torch

    class PrefixProducts(torch.autograd.Function):
        @staticmethod
        def forward(W: Any) -> Any:  # type: ignore[override]
            P, saved = forward(W)
            return P, saved

        @staticmethod
        def setup_context(ctx: Any, inputs: Any, output: Any) -> None:
            ctx.save_for_backward(inputs[0])
            ctx.saved = output[1]

        @staticmethod
        def backward(ctx: Any, dP: Any, *unused: Any) -> Any:  # type: ignore[override]
            (W,) = ctx.saved_tensors
            return backward(W, ctx.saved, dP)

    return lambda W: PrefixProducts.apply(W)[0]


class _EngineSpy:
    """Stands in for autograd's engine and counts backward runs (autograd.grad, .backward(),
    torch.func.vjp all end up in run_backward)."""

    def __init__(self, engine: Any) -> None:
        self.engine = engine
        self.calls = 0

    def run_backward(self, *args: Any, **kwargs: Any) -> Any:
        self.calls += 1
        return self.engine.run_backward(*args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.engine, name)


def count_autograd_runs(api: Api, fn: Callable[..., Any], *args: Any) -> tuple[Any, Any, int]:
    """Call fn; (value, raised, how many times autograd's engine ran during the call)."""
    from torch.autograd.variable import Variable

    engine = Variable._execution_engine
    spy = _EngineSpy(engine)
    Variable._execution_engine = spy
    try:
        value, raised = api.call(fn, *args)
    finally:
        Variable._execution_engine = engine
    return value, raised, spy.calls
