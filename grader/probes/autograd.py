"""Autograd-facing probe helpers: gradients through candidate code, gradcheck of a custom
torch.autograd.Function, and counting autograd runs inside a function that must not use it.

torch functions are bound when the worker loads this module (before any candidate import), so an
exercise file that reassigns `torch.autograd.gradcheck` does not change what a probe calls.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from functools import cache, partial
from typing import Any

import numpy as np

from grader.probes.api import Api, as_dict


def leaf(a: np.ndarray) -> Any:
    """A float64 (or the array's own dtype) torch leaf that requires grad."""
    import torch

    return torch.from_numpy(np.array(a, copy=True)).requires_grad_()


def gradient_through(api: Api, forward: Callable[..., Any], inputs: Sequence[np.ndarray],
                     upstream: Any, wrt: int = 0) -> dict[str, Any]:
    """Differentiate sum(forward(*inputs) * upstream) with torch autograd w.r.t. inputs[wrt],
    as a caller would: out.backward(G) with G the upstream gradient, which must come through
    unchanged (a backward may not write into the gradient it receives), then
    forward(...).sum().backward(), whose upstream is one expanded tensor (a backward that writes
    into it raises). Plain data back: the stage that failed, or the gradient."""
    import torch

    def run() -> tuple[list[Any], Any, dict[str, Any] | None]:
        leaves = [leaf(a) if i == wrt else torch.from_numpy(np.array(a, copy=True))
                  for i, a in enumerate(inputs)]
        value, raised = api.call(forward, *leaves)
        if raised is not None:
            return leaves, None, {"stage": "forward", "raised": raised.as_dict()}
        out = api.backend.to_tensor(value)
        return leaves, out, None if out.requires_grad else {"stage": "detached"}

    leaves, out, failed = run()
    if failed is not None:
        return failed
    given = np.array(upstream, dtype=np.asarray(upstream).dtype, copy=True)
    G = torch.from_numpy(given.copy()).to(out.dtype)
    _, raised = api.call(lambda: out.backward(G))
    if raised is not None:
        return {"stage": "backward", "raised": raised.as_dict()}
    if not np.array_equal(G.numpy(), given.astype(G.numpy().dtype), equal_nan=True):
        return {"stage": "upstream_written"}
    grad = leaves[wrt].grad
    if grad is None:
        return {"stage": "no_grad"}
    _, summed, failed = run()
    if failed is None:
        _, raised = api.call(lambda: summed.sum().backward())
        if raised is not None:
            return {"stage": "sum_backward", "raised": raised.as_dict()}
    return {"stage": "ok", "grad": grad.detach().numpy().copy()}


@cache
def bound_gradcheck() -> Callable[..., Any]:
    """torch.autograd.gradcheck, bound before any candidate import and called once: its first
    call imports a good deal of torch (about 0.3 s), which every child forked afterwards
    inherits instead of paying again."""
    import torch

    gradcheck = torch.autograd.gradcheck
    warm = torch.ones((1,), dtype=torch.float64, requires_grad=True)
    gradcheck(lambda x: x * x, (warm,))
    return gradcheck


def run_gradcheck(api: Api, fn: Callable[..., Any], inputs: Sequence[np.ndarray],
                  needs_grad: Sequence[bool] | None = None) -> dict[str, Any]:
    """torch.autograd.gradcheck in float64, slow mode (the inputs here are small)."""
    import torch

    wants = list(needs_grad) if needs_grad is not None else [True] * len(inputs)
    tensors = tuple(torch.from_numpy(np.array(a, dtype=np.float64)).requires_grad_(w)
                    for a, w in zip(inputs, wants, strict=True))
    gradcheck = bound_gradcheck()
    _, raised = api.call(lambda: gradcheck(fn, tensors, eps=1e-6, atol=1e-5, rtol=1e-3,
                                           fast_mode=False))
    return {"ok": raised is None, "raised": as_dict(raised)}


def custom_function(forward: Callable[..., tuple[Any, Any]],
                    backward: Callable[[tuple[Any, ...], Any, Any], Any]) -> Callable[..., Any]:
    """A torch.autograd.Function (forward / setup_context / backward) around plain pieces.

    forward(*inputs) -> (output, saved) in torch tensors; backward(inputs, saved, grad) -> the
    gradient of the first input (the others get None). Whatever the flavor, the Function speaks
    torch, so gradcheck can drive it.
    """
    import torch

    class Wrapped(torch.autograd.Function):
        @staticmethod
        def forward(*inputs: Any) -> Any:
            return forward(*inputs)

        @staticmethod
        def setup_context(ctx: Any, inputs: Any, output: Any) -> None:
            ctx.save_for_backward(*inputs)
            ctx.saved = output[1]

        @staticmethod
        def backward(ctx: Any, grad: Any, *unused: Any) -> Any:
            inputs = ctx.saved_tensors
            return (backward(inputs, ctx.saved, grad),) + (None,) * (len(inputs) - 1)

    apply: Callable[..., Any] = Wrapped.apply
    return lambda *inputs: apply(*inputs)[0]


class EngineSpy:
    """Stands in for autograd's engine and records, for every backward run (autograd.grad,
    .backward(), torch.func.vjp all end up in run_backward), whether it kept the graph
    (retain_graph or create_graph)."""

    def __init__(self, engine: Any) -> None:
        self.engine = engine
        self.kept: list[bool] = []

    @property
    def calls(self) -> int:
        return len(self.kept)

    def run_backward(self, *args: Any, **kwargs: Any) -> Any:
        keep = args[2] if len(args) > 2 else kwargs.get("keep_graph", False)
        self.kept.append(bool(keep))
        return self.engine.run_backward(*args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.engine, name)


@contextmanager
def spying_on_the_engine() -> Iterator[EngineSpy]:
    """Autograd's engine watched by an EngineSpy for the length of the block."""
    from torch.autograd.variable import Variable

    engine = Variable._execution_engine
    spy = EngineSpy(engine)
    Variable._execution_engine = spy  # type: ignore[assignment]
    try:
        yield spy
    finally:
        Variable._execution_engine = engine


_AT_IMPORT = [0]
"""How often autograd's engine ran while this child imported the candidate's part."""


@contextmanager
def watching_the_import() -> Iterator[None]:
    """The candidate's import under seeing_autograd (the spy on autograd's engine, and the
    count of the tensors autograd saves for a backward, which sees an engine of the code's own
    and TorchScript too): module-level code that runs autograd (to trace the derivative it
    produces into a graph of plain operations, say, which every later call replays with no
    engine run) has differentiated as surely as a call that does it. A tensor made with
    requires_grad at import is no run; torch.func's vmap runs under the hooks, and only its
    autograd transforms refuse them (the import then fails, saying so)."""
    with seeing_autograd() as seen:
        try:
            yield
        finally:
            _AT_IMPORT[0] = seen()


def autograd_at_import() -> int:
    """How often autograd's engine ran while the candidate's part was imported (see
    watching_the_import)."""
    return _AT_IMPORT[0]


@contextmanager
def counting_saved_tensors() -> Iterator[list[int]]:
    """How many tensors autograd saves for a backward while the block runs (a one-element
    list, read after the block): a graph being recorded, wherever the operations run from,
    TorchScript included, which neither the engine spy nor a torch function mode sees. A
    backward by hand records none. Only where no autograd is expected: while these hooks are
    in place, autograd skips its check of in-place writes to saved tensors."""
    import torch

    saved = [0]

    def pack(tensor: Any) -> Any:
        saved[0] += 1
        return tensor

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda tensor: tensor):
        yield saved


@contextmanager
def seeing_autograd(watch: bool = True) -> Iterator[Callable[[], int]]:
    """With `watch` (a backward by hand), the block under the spy on autograd's engine and the
    count of the tensors autograd saves for a backward (counting_saved_tensors, which sees a
    graph recorded from TorchScript too; neither costs anything until autograd runs); yields
    how often autograd has been seen so far: its engine's runs, or 1 for a graph recorded
    where no run was seen (always 0 without `watch`)."""
    if not watch:
        yield lambda: 0
        return
    with spying_on_the_engine() as spy, counting_saved_tensors() as saved:
        yield lambda: spy.calls or int(saved[0] > 0)


HOOKS_REFUSED = "saved tensor hooks"
"""What torch.func says when it refuses to run under saved-tensor hooks (counting_saved_tensors):
a transform of autograd's was called, which is autograd run."""


def refused_for_hooks(raised: Any) -> bool:
    """Whether a call under counting_saved_tensors raised because torch.func refused them."""
    return raised is not None and raised.type == "RuntimeError" \
        and HOOKS_REFUSED in raised.message


def count_autograd_runs(api: Api, fn: Callable[..., Any], *args: Any,
                        profiled: bool = True) -> tuple[Any, Any, int]:
    """Call fn; (value, raised, how many times autograd differentiated during the call): the
    runs of autograd's engine, or, where none was seen, 1 if any torch call of fn made a
    tensor that takes part in automatic differentiation (an engine of its own, torch.func,
    forward-mode duals all need one), or if autograd's C++ engine evaluated a node, as the
    profiler records it below anything Python can switch off (code that puts the real engine
    back in place of the spy and hides from every torch function mode). `profiled=False`
    leaves the profiler out: it costs about a millisecond per operation, so a call that makes
    thousands (an honest loop over rows, timed) would pay seconds for it."""
    watch_type: Any = autodiff_watch()
    if not profiled:
        with seeing_autograd() as seen, watch_type() as watch:
            value, raised = api.call(fn, *args)
        if refused_for_hooks(raised):
            return None, None, 1
        return value, raised, seen() or int(watch.seen)
    with watch_type.profile() as recorded:
        with watch_type.mark(WATCH_MARK):
            pass
        with seeing_autograd() as seen, watch_type() as watch:
            value, raised = api.call(fn, *args)
        with watch_type.mark(WATCH_MARK):
            pass
    if refused_for_hooks(raised):
        return None, None, 1
    names = [e.name for e in recorded.function_events]
    # A backward by hand never stops the profiler; one that did (or stopped it and started
    # another) hid what it ran, and lost the mark made before the call or the one after it.
    stopped = names.count(WATCH_MARK) != 2
    evaluated = stopped or any(name.startswith(ENGINE_EVENT) for name in names)
    return value, raised, seen() or int(watch.seen) or int(evaluated)


def warm_the_profiler() -> None:
    """Start and stop the watch's profiler once, in a child about to refuse new threads
    (grader.runner.nofork): the thread the profiler makes on its first start is made now, and
    the watched call's profile later runs with it."""
    watch_type: Any = autodiff_watch()
    with watch_type.profile():
        pass


ENGINE_EVENT = "autograd::engine::evaluate_function"
"""The profiler's name for autograd's engine running one node of a backward."""
WATCH_MARK = "grader::autograd_watch"
"""The range the watch records before and after the call, to tell that the profiler recorded
all along."""


@cache
def autodiff_watch() -> type:
    """A torch function mode that notes whether any torch call in its block returned a tensor
    that takes part in automatic differentiation: one that requires grad or has a grad_fn
    (reverse mode, whichever engine runs it), the wrapper of a torch.func transform that
    differentiates (grad, vjp, jacrev: vmap's batching wrapper is no differentiation, and is
    looked through), or one that carries a forward-mode tangent. A hand-written backward on
    plain tensors makes none. Made
    once, before any candidate import (the worker and the executor call it as they start), so
    what it calls is torch's own."""
    import torch
    import torch.autograd.forward_ad as forward_ad
    from torch._C._profiler import _ExperimentalConfig
    from torch.overrides import TorchFunctionMode

    unpack_dual: Callable[..., Any] = forward_ad.unpack_dual
    functorch: Any = torch._C._functorch
    try:
        every_thread = _ExperimentalConfig(profile_all_threads=True)
    except TypeError:  # a torch older than the option: the profiler sees the caller's thread
        every_thread = _ExperimentalConfig()

    def differentiable(value: Any) -> bool:
        if isinstance(value, (tuple, list)):
            return any(differentiable(v) for v in value)
        if not isinstance(value, torch.Tensor):
            return False
        return (value.requires_grad or value.grad_fn is not None or grad_tracking(value)
                or (forward_ad._current_level >= 0
                    and unpack_dual(value).tangent is not None))

    def grad_tracking(value: Any) -> bool:
        """Whether a torch.func wrapper, or one it wraps (vmap over grad), tracks gradients."""
        while functorch.is_functorch_wrapped_tensor(value):
            if functorch.is_gradtrackingtensor(value):
                return True
            value = functorch.get_unwrapped(value)
        return False

    class Watch(TorchFunctionMode):
        seen = False
        # The profiler too, bound now, before any candidate code can replace it (its output,
        # kineto's lines on stderr, goes where a child's stderr goes: nowhere). It watches
        # every thread of the process: a torch function mode is the calling thread's alone,
        # and so by default is the profiler, so a backward run on another thread (one started
        # for it, or a pool's, started at import) would otherwise be out of every sight.
        profile = staticmethod(partial(
            torch.autograd.profiler.profile, experimental_config=every_thread))
        mark = torch.autograd.profiler.record_function

        def __torch_function__(self, func: Any, types: Any, args: Any = (),
                               kwargs: Any = None) -> Any:
            result = func(*args, **(kwargs or {}))
            if not self.seen:
                try:
                    self.seen = differentiable(result)
                except Exception:  # noqa: BLE001 - a tensor subclass that will not say
                    pass
            return result

    return Watch
