"""The generic probes: the candidate-side halves of the generic check kinds.

Each probe is a plain function `probe(api, **args) -> observation`, looked up by name, whose
arguments are plain data (cases as numpy arrays, names of the candidate's functions and of the
round's helpers). That keeps every probe independent of the judge: what crosses to the child is
data, and what comes back is data.

A round's helpers (its probes.py) are named by the check table:
- `call(api, case) -> args`: the arguments of one call, built from the case's arrays;
- `read(api, args, value) -> data`: what to judge of a call (default: the return value);
- `run(api, case) -> observation`: a whole call sequence (e.g. a forward, then a backward),
  returning {"value", "raised"} itself.
"""

from __future__ import annotations
import __future__

import ast
import symtable
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from types import CodeType, ModuleType
from typing import Any, cast

import numpy as np

from grader.probes.api import Api, as_dict
from grader.probes.autograd import (
    HOOKS_REFUSED,
    autograd_at_import,
    bound_gradcheck,
    count_autograd_runs,
    gradient_through,
    leaf,
    refused_for_hooks,
    run_gradcheck,
    seeing_autograd,
)
from grader.probes.backends import CandidateFault

Observation = dict[str, Any]
CaseData = Mapping[str, Any]
"""One case as the child sees it: {"inputs": {name: array}, "label": str}."""

PROBES: dict[str, Callable[..., Any]] = {}


def probe(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Register a generic probe under its function name."""
    PROBES[fn.__name__] = fn
    return fn


BEFORE_FORK: dict[str, Callable[[], object]] = {"gradcheck": bound_gradcheck}
"""What a probe needs done in the process that forks the child running it (the worker, a
sandbox's executor), by probe name (child.ready_for runs it there, once a process): done in the
child instead, after the candidate's import, it would find whatever that code left
(torch.autograd.gradcheck reassigned, a module planted in sys.modules), and each child would
pay for it. Only where a child will call the probe: binding gradcheck loads about 0.3 s of
torch that a part without one need not wait for."""


def read_tree(api: Api, value: Any, what: str = "the result") -> Any:
    """A returned value as numpy: arrays, and tuples, lists and dicts of them; Python numbers
    stay numbers."""
    if isinstance(value, dict):
        return {str(k): read_tree(api, v, f"{what}[{k!r}]") for k, v in value.items()}
    if isinstance(value, tuple | list):
        return [read_tree(api, v, f"{what}[{i}]") for i, v in enumerate(value)]
    if isinstance(value, bool | int | float) and not isinstance(value, np.ndarray):
        return float(value)
    if isinstance(value, np.generic):
        return float(value)
    return api.backend.to_numpy(value, what)


def native_args(api: Api, case: CaseData, names: Sequence[str]) -> tuple[Any, ...]:
    """The case's inputs `names`, in order, as the flavor's native arrays (fresh copies)."""
    inputs = case["inputs"]
    return tuple(api.backend.native(np.asarray(inputs[n])) for n in names)


def build_args(api: Api, case: CaseData, call: str | None, args: Sequence[str]) -> tuple[Any, ...]:
    return api.helper(call)(api, case) if call else native_args(api, case, args)


def one_call(api: Api, function: str | None, case: CaseData, call: str | None = None,
             args: Sequence[str] = (), read: str | None = None, run: str | None = None,
             returns: str = "array", watch_inputs: bool = False) -> Observation:
    """Call the candidate once on a case: {"value": what to judge, "raised": ...}.

    The value is read by the `read` helper, else as one array (`returns = "array"`: anything
    else is a fault naming what came back), as a tree of arrays (`returns = "tree"`), or not
    at all (`returns = "nothing"`: a validation's replay, where only a raise counts). With
    `watch_inputs`, "wrote_inputs": whether the call changed an input it was handed (the
    case's `args`, given as they are: not through a `call` helper)."""
    return _one_call_kept(api, function, case, call, args, read, run, returns,
                          watch_inputs)[0]


def _one_call_kept(api: Api, function: str | None, case: CaseData, call: str | None,
                   args: Sequence[str], read: str | None, run: str | None,
                   returns: str, watch_inputs: bool = False,
                   handed: list[tuple[Observation, CaseData, Sequence[Any]]] | None = None
                   ) -> tuple[Observation, Any]:
    """one_call's observation, and the value the call returned (None after a `run` helper or
    a raise); with `handed` (a list), what the call kept of the watched properties ("kept",
    see _kept_properties), and, where the call was handed the inputs `args` as they are, that
    "kept", the case and the arrays handed appended to `handed` (read again later)."""
    if run:
        observed: Observation = api.helper(run)(api, case)
        return observed, None
    built = build_args(api, case, call, args)
    value, raised = api.call(api.function(function or ""), *built)
    observation, kept = _one_call_read(api, built, value, raised, read, returns)
    if handed is not None and raised is None:
        observation["kept"] = _kept_properties(api, case, () if call else args, built, value)
        if not call:
            handed.append((observation["kept"], case, built))
    if watch_inputs and not call:
        observation["wrote_inputs"] = bool(_written(api, case, args, built))
    return observation, kept


def _written(api: Api, case: CaseData, args: Sequence[str], built: Sequence[Any]) -> list[str]:
    """The inputs `args` whose arrays, as the call was handed them, no longer hold the case's
    values (one that cannot be read back counts as changed)."""
    changed = []
    for name, given in zip(args, built, strict=False):
        try:
            same = np.array_equal(api.backend.to_numpy(given, name),
                                  np.asarray(case["inputs"][name]), equal_nan=True)
        except Exception:  # noqa: BLE001 - whatever the call left there
            same = False
        if not same:
            changed.append(name)
    return changed


def _kept_properties(api: Api, case: CaseData, args: Sequence[str], built: Sequence[Any],
                     value: Any) -> Observation:
    """What a call that returned showed of the properties checks watch for, read in every call
    a check of values makes: a property is then also judged on calls no code can tell from
    those whose values are judged (kinds.with_answers' `kept`). "wrote": the inputs it
    changed; "shared": those its result is or shares memory with (both only where the call
    was handed the inputs `args` as they are); "got" and "want": its result's dtype and device
    and its first argument's; "is_float": whether it is a Python float, "type" its type."""
    natives = dict(zip(args, built, strict=False))
    kept: Observation = {"wrote": _written(api, case, args, built),
                         "shared": shared_inputs(api, value, natives) if natives else [],
                         "is_float": type(value) in (float, np.float64),
                         "type": f"{type(value).__module__}.{type(value).__qualname__}"}
    try:
        backend = api.backend
        kept["got"] = [backend.dtype_name(value), backend.device_name(value)]
        kept["want"] = [backend.dtype_name(built[0]), backend.device_name(built[0])]
    except Exception:  # noqa: BLE001 - a result that is no array has no dtype to compare
        pass
    return kept


def _one_call_read(api: Api, built: Sequence[Any], value: Any, raised: Any, read: str | None,
                   returns: str) -> tuple[Observation, Any]:
    """The observation of a call that returned `value` or raised."""
    if raised is not None:
        return {"value": None, "raised": raised.as_dict()}, None
    if read:
        data = api.helper(read)(api, built, value)
    elif returns == "tree":
        data = read_tree(api, value)
    elif returns == "nothing":
        data = None
    else:
        data = api.backend.to_numpy(value)
    return {"value": data, "raised": None}, value


@probe
def call_each(api: Api, function: str | None, cases: Sequence[CaseData], call: str | None = None,
              args: Sequence[str] = (), read: str | None = None, run: str | None = None,
              returns: str = "array") -> list[Observation]:
    """One observation per case, up to and including the first that raised.

    What each call returned is read whole (as arrays) when it returns and again once every
    later call has run; a result that changed in between is marked `changed_later`: the
    function hands back memory it keeps and writes again (a module-level buffer or cache), so
    a caller who holds one result while computing the next reads the wrong numbers. So are
    the inputs each call was handed: those a later call wrote join its "kept" "wrote", named
    in its "later" too (a caller's array cleared at the next call)."""
    observed: list[Observation] = []
    kept: list[tuple[int, Any, Any]] = []
    handed: list[tuple[Observation, CaseData, Sequence[Any]]] = []
    for case in cases:
        observation, value = _one_call_kept(api, function, case, call, args, read, run,
                                             returns, handed=handed)
        observed.append(observation)
        first = _whole_reading(api, value) if value is not None else None
        if first is not None:
            kept.append((len(observed) - 1, value, first))
        if observation["raised"] is not None:
            break
    for index, value, first in kept:
        if not same_reading(first, _whole_reading(api, value)):
            observed[index]["changed_later"] = True
    for facts, case, built in handed:
        later = [n for n in _written(api, case, args, built) if n not in facts["wrote"]]
        if later:
            facts["wrote"], facts["later"] = [*facts["wrote"], *later], later
    return observed


def _whole_reading(api: Api, value: Any) -> Any:
    """Every array in a returned value (arrays, and tuples, lists and dicts of them), copied;
    None where some part of it is not an array or a number."""
    try:
        return read_tree(api, value)
    except Exception:  # noqa: BLE001 - an object read_tree cannot copy is not compared
        return None


def same_reading(a: Any, b: Any) -> bool:
    """Whether two readings of read_tree's are the same, bit for bit (NaN equal to NaN)."""
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same_reading(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same_reading(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, np.ndarray) and isinstance(b, np.ndarray):
        return a.shape == b.shape and a.dtype == b.dtype and bool(
            np.array_equal(a, b, equal_nan=a.dtype.kind in "fc"))
    if isinstance(a, float) and isinstance(b, float):
        return a == b or (a != a and b != b)
    return False


@probe
def result_types(api: Api, function: str, cases: Sequence[CaseData], call: str | None = None,
                 args: Sequence[str] = ()) -> list[Observation]:
    """For each case, the type of what the call returned and whether it is a Python float
    (or numpy's float64, a subclass of float that adds nothing), and its answer (see
    `answer`); up to and including the first call that raised. A subclass of the candidate's
    own is not one: it can carry anything."""
    fn, rows = api.function(function), list[Observation]()
    for case in cases:
        value, raised = api.call(fn, *build_args(api, case, call, args))
        rows.append({"raised": as_dict(raised),
                     "type": f"{type(value).__module__}.{type(value).__qualname__}",
                     "is_float": type(value) in (float, np.float64),
                     "answer": answer(api, value, raised)})
        if raised is not None:
            break
    return rows


def answer(api: Api, value: Any, raised: Any) -> Any:
    """What a call answered, read whole as arrays and numbers (None after a raise, or where it
    cannot be read so): the checks that watch a call for something other than its values
    compare this with the reference's answer on the same inputs (`reference_twice`), so code
    that tells a watched call apart cannot answer it without the work."""
    return None if raised is not None or value is None else _whole_reading(api, value)


@probe
def reference_twice(api: Api, probe: str, args: dict[str, Any], reference: Sequence[str],
                    key: str = "answer") -> Any:
    """The baseline of a check that compares answers: the probe `probe` run on `args` with
    the round's reference (its folder and part) in place of the candidate's code, twice; each
    row's answer (its `key`) is kept only where both runs gave it bit for bit (a function that
    draws random numbers answers each call differently, and no answer of the candidate's could
    be held to one of them)."""
    api = reference_api(api, *reference)
    first, second = (resolve(api, probe)(api, **args) for _ in range(2))
    for row, again in zip(first, second, strict=False):
        if not same_reading(row.get(key), again.get(key)):
            row[key] = None
    return first


@probe
def run_each(api: Api, cases: Sequence[CaseData]) -> list[Observation]:
    """Every case through the run (a probes.py helper `run(api, case)`) its extra names, valid
    and malformed cases alike (the compare_runs kind)."""
    return [api.helper(case["extra"]["run"])(api, case) for case in cases]


@probe
def raises_each(api: Api, function: str, cases: Sequence[CaseData], call: str | None = None,
                args: Sequence[str] = ()) -> list[Observation]:
    """For each (malformed) case: what the call raised, or None."""
    fn = api.function(function)
    rows = []
    for case in cases:
        _, raised = api.call(fn, *build_args(api, case, call, args))
        rows.append({"case": case["label"], "raised": as_dict(raised)})
    return rows


def snapshot(api: Api, x: Any) -> np.ndarray:
    return api.backend.to_numpy(x, "the input")


@probe
def inputs_after(api: Api, function: str | None, cases: Sequence[CaseData],
                 args: Sequence[str] = (), run: str | None = None,
                 read_result: bool = False) -> list[Observation]:
    """For each case, run the candidate on native copies of its inputs; what each input holds
    after (up to the first call that raised).

    Without `run` the function is called on the inputs `args`; `run(api, natives)` (a helper)
    may instead call several functions on the natives and returns what was raised (a Raised)
    or None, or (the last call's result, what was raised). "shared": the inputs a result
    shares memory with (or is); "answer": what it returned (see `answer`); "later": the inputs
    a later call wrote (see _read_again). `read_result`: each
    result (or each of a tuple or list of them) must read as an array, else the probe reports
    a fault naming what came back."""
    rows = []
    for case in cases:
        natives = {name: api.backend.native(np.asarray(a)) for name, a in case["inputs"].items()}
        if run:
            done = api.helper(run)(api, natives)
            value, raised = done if isinstance(done, tuple) else (None, done)
        else:
            value, raised = api.call(api.function(function or ""),
                                     *(natives[n] for n in args))
        if read_result and not raised:
            for out in value if isinstance(value, tuple | list) else (value,):
                api.backend.to_numpy(out)
        rows.append({"raised": as_dict(raised),
                     "shared": [] if raised else shared_inputs(api, value, natives),
                     "after": {name: snapshot(api, x) for name, x in natives.items()},
                     "answer": answer(api, value, raised), "natives": natives})
        if raised:
            break
    for case, row in zip(cases, rows, strict=False):
        _read_again(api, case, row)
    return rows


def _read_again(api: Api, case: CaseData, row: Observation) -> None:
    """A row's inputs read again once every call has run: one that held its case's values
    right after its call and not now was written by a later call (code that clears the last
    call's arrays when the next one comes), which a caller still holding them reads; "later"
    names those inputs."""
    later = []
    for name, x in row.pop("natives").items():
        original = np.asarray(case["inputs"][name])
        now = snapshot(api, x)
        if unchanged(original, row["after"][name]) and not unchanged(original, now):
            row["after"][name] = now
            later.append(name)
    row["later"] = later


def unchanged(before: np.ndarray, after: np.ndarray) -> bool:
    """Bit-for-bit equality, NaN included."""
    return before.shape == after.shape and bool(np.array_equal(before, after, equal_nan=True))


def shared_inputs(api: Api, value: Any, natives: dict[str, Any]) -> list[str]:
    """The inputs that a result (or an array of a tuple or list of results) is, or shares
    memory with."""
    outputs = value if isinstance(value, tuple | list) else (value,)
    return sorted({name for name, x in natives.items() for out in outputs
                   if out is x or isinstance(out, type(x)) and _shares(api, out, x)})


def _shares(api: Api, out: Any, x: Any) -> bool:
    try:
        return api.backend.shares_memory(out, x)
    except Exception:  # noqa: BLE001 - an odd result shares nothing that can be seen
        return False


@probe
def dtype_device(api: Api, function: str, cases: Sequence[CaseData],
                 args: Sequence[str]) -> list[Observation]:
    """The dtype and device of each result against those of the first input, and its answer
    (see `answer`)."""
    rows: list[Observation] = []
    for case in cases:
        natives = native_args(api, case, args)
        value, raised = api.call(api.function(function), *natives)
        if raised:
            return rows + [{"raised": raised.as_dict()}]
        api.backend.to_numpy(value)
        b = api.backend
        rows.append({"raised": None, "got": [b.dtype_name(value), b.device_name(value)],
                     "want": [b.dtype_name(natives[0]), b.device_name(natives[0])],
                     "answer": answer(api, value, None)})
    return rows


@probe
def autograd_through(api: Api, function: str, case: CaseData, args: Sequence[str],
                     upstream: str, wrt: int = 0) -> Observation:
    """torch autograd through the candidate's forward (see autograd.gradient_through)."""
    inputs = [np.asarray(case["inputs"][n]) for n in args]
    return gradient_through(api, api.function(function), inputs, case["inputs"][upstream], wrt)


@probe
def function_node(api: Api, cls: str, function: str, case: CaseData, args: Sequence[str],
                  wrt: Sequence[str], setup_context: bool) -> Observation:
    """Is `cls` a torch.autograd.Function (with a setup_context of its own, where asked), and
    is the node of `function(*args)`'s result (the inputs `wrt` leaves requiring grad) its
    backward node? Asked of any Function, whatever its style: a result that bypasses it is
    evidence of its own."""
    import torch

    found: Any = api.function(cls)
    is_function = isinstance(found, type) and issubclass(found, torch.autograd.Function)
    observed: Observation = {
        "is_function": is_function, "raised": None,
        "kind": "class" if isinstance(found, type) else type(found).__name__,
        "setup_context": not setup_context or (
            is_function and found.setup_context is not torch.autograd.Function.setup_context)}
    if not is_function:
        return observed
    inputs = [leaf(case["inputs"][n]) if n in wrt else torch.from_numpy(
        np.array(case["inputs"][n], copy=True)) for n in args]
    value, raised = api.call(api.function(function), *inputs)
    node = None if raised else getattr(
        api.backend.to_tensor(value, f"{function}({', '.join(args)})"), "grad_fn", None)
    observed.update(raised=as_dict(raised), grad_fn=type(node).__name__,
                    through=isinstance(node, found._backward_cls))
    return observed


@probe
def backward_alone(api: Api, function: str, case: CaseData, args: Sequence[str],
                   upstream: str, count_flops: bool) -> list[Observation]:
    """The backward node of `function(*args)`'s result called itself (node.apply(upstream):
    the very call autograd makes, with the real ctx), with one input of `args` requiring grad
    at a time: what it returned, the gradient asked for and, where asked, the matmul flops it
    did."""
    import torch

    called = f"{function}({', '.join(args)})"
    rows: list[Observation] = []
    for index, name in enumerate(args):
        inputs = [leaf(case["inputs"][n]) if n == name else torch.from_numpy(
            np.array(case["inputs"][n], copy=True)) for n in args]
        value, raised = api.call(api.function(function), *inputs)
        if raised:
            return rows + [{"raised": raised.as_dict()}]
        node = api.backend.to_tensor(value, called).grad_fn
        if node is None:
            raise CandidateFault(f"with only {name} requiring grad, {called}'s result does not "
                                 f"require grad: nothing connects it to {name} (a detach, or "
                                 "an operation outside autograd, on the way)")
        if not hasattr(node, "_forward_cls"):
            raise CandidateFault(f"{called} did not go through a custom autograd.Function")
        grad = torch.from_numpy(np.array(case["inputs"][upstream], copy=True))
        counted, raised = api.call(lambda n=node, g=grad: api.backend.count_matmul_flops(
            n.apply, g) if count_flops else (n.apply(g), 0))
        if raised:
            return rows + [{"raised": raised.as_dict()}]
        returned, flops = counted
        if len(args) == 1 and not isinstance(returned, tuple | list):
            returned = (returned,)  # a Function of one input may return its gradient bare
        whole = isinstance(returned, tuple | list) and len(returned) == len(args)
        wanted = returned[index] if whole else None
        rows.append({"raised": None, "kind": type(returned).__name__, "flops": int(flops),
                     "returned": [_described(x) for x in returned] if whole else None,
                     "value": api.backend.to_numpy(wanted, "the gradient")
                     if wanted is not None else None})
    return rows


def _described(x: Any) -> str | None:
    return None if x is None else f"{type(x).__name__} of shape {tuple(getattr(x, 'shape', ()))}"


@probe
def gradcheck(api: Api, make: str | None, function: str | None, case: CaseData,
              inputs: Sequence[str], gradient: Mapping[str, Any] | None = None,
              through: Mapping[str, Any] | None = None, grads: str | None = None
              ) -> Observation:
    """gradcheck of a torch function of the case's `inputs`: the candidate's own `function`, or
    the one the helper `make(api, case)` builds around their code; and, for the judge's own
    cross-check, the candidate's gradient on the same case (`gradient`: one_call's arguments)
    or autograd's gradient through their forward (`through`: autograd_through's arguments), or
    autograd's gradients of every input, all requiring grad (`grads`, a helper)."""
    fn = api.helper(make)(api, case) if make else api.function(function or "")
    result: Observation = {"gradcheck": run_gradcheck(
        api, fn, [np.asarray(case["inputs"][n]) for n in inputs],
        None if grads else _needs_grad(len(inputs)))}
    if grads is not None:
        result["grads"] = api.helper(grads)(api, case)
    if gradient is not None:
        result["value"] = one_call(api, case=case, **gradient)
    if through is not None:
        result["through"] = autograd_through(api, case=case, **through)
    return result


def _needs_grad(count: int) -> list[bool]:
    """gradcheck differentiates the first input only: the others (an upstream, a buffer)
    are data."""
    return [True] + [False] * (count - 1)


@probe
def autograd_runs(api: Api, function: str | None, case: CaseData, args: Sequence[str] = (),
                  run: str | None = None, read: str | None = None,
                  call: str | None = None) -> Observation:
    """How many times autograd's engine ran inside the candidate's function (on the inputs
    `args`, or on what the `call` helper builds, a forward's cache say, outside the count), or
    during a run helper's whole call sequence, and what the watched call gave ("value": read by
    the `read` helper, else as a tree of arrays; None where it cannot be read), so that the
    judge can hold the watched run to the same answer as every other."""
    if run:
        helper = api.helper(run)
        obs, _, runs = count_autograd_runs(api, lambda: helper(api, case))
        return {"raised": obs["raised"] if obs else None, "runs": runs,
                "value": obs.get("value") if obs else None, "at_import": autograd_at_import()}
    built = build_args(api, case, call, args)
    value, raised, runs = count_autograd_runs(api, api.function(function or ""), *built)
    return {"raised": as_dict(raised), "runs": runs, "at_import": autograd_at_import(),
            "value": None if raised else _readable(api, built, value, read)}


def _readable(api: Api, built: Sequence[Any], value: Any, read: str | None) -> Any:
    """A result as data the judge can compare, or None where it is not."""
    try:
        return api.helper(read)(api, built, value) if read else read_tree(api, value)
    except CandidateFault:
        return None


def _counter(api: Api, measure: str) -> Callable[..., tuple[Any, int]]:
    """The backend's counter for a complexity check's measure ("flops", "operations" or
    "products")."""
    return {"operations": api.backend.count_operations,
            "products": api.backend.count_products}.get(measure, api.backend.count_matmul_flops)


@probe
def cost_counts(api: Api, function: str, cases: Sequence[CaseData], args: Sequence[str] = (),
                call: str | None = None, measure: str = "flops", watch: bool = False,
                reference: Sequence[str] | None = None, nonce: int = 0) -> Observation:
    """What the counter saw in one call per case: matmul flops, or array operations, and each
    counted call's answer as a projection (see `answer_projection`) that the judge compares
    with the reference's on the same case: a count is only the cost of work that gave the
    right answer. With `watch`, the calls also under seeing_autograd, and "autograd" says how
    often it ran (a torch.func transform, which refuses to run under its hooks, counts by its
    refusal). With `reference` (a round's folder and a part id), the reference's function
    instead, in a process with no candidate code."""
    if reference is not None:
        api = reference_api(api, *reference)
    fn = api.function(function)
    count, weights = _counter(api, measure), Weights(nonce)
    counts: list[int] = []
    projections: list[list[float] | None] = []
    with seeing_autograd(watch) as seen:
        for case in cases:
            built = build_args(api, case, call, args)
            try:
                value, counted = count(fn, *built)
            except RuntimeError as exc:
                if not (watch and HOOKS_REFUSED in str(exc)):
                    raise
                return {"counts": counts, "autograd": seen() + 1, "projections": projections}
            counts.append(int(counted))
            projections.append(answer_projection(api, value, built, weights))
        return {"counts": counts, "autograd": seen(), "projections": projections}


@probe
def plain_projections(api: Api, function: str, cases: Sequence[CaseData],
                      args: Sequence[str] = (), call: str | None = None,
                      nonce: int = 0) -> list[Observation]:
    """Each case's call made the plain way (no counter, no watch: as the checks of the values
    call), its answer projected with cost_counts' weights: a counted call that answered
    otherwise than the reference is held to it (checks.base.Recheck)."""
    fn, weights = api.function(function), Weights(nonce)
    rows: list[Observation] = []
    for case in cases:
        built = build_args(api, case, call, args)
        value, raised = api.call(fn, *built)
        rows.append({"raised": as_dict(raised), "projection": None if raised is not None
                     else answer_projection(api, value, built, weights)})
    return rows


def answer_projection(api: Api, value: Any, built: Sequence[Any],
                      weights: Weights) -> list[float] | None:
    """The projection of what a call answered: its result, or where it returned None (a
    function that writes into a buffer it was handed), the arguments as the call left them."""
    return projection(api, value if value is not None else list(built), weights)


@probe
def timed_calls(api: Api, function: str, case: CaseData, repeats: int, args: Sequence[str] = (),
                call: str | None = None, measure: str = "flops",
                reference: Sequence[str] | None = None, nonce: int = 0,
                watch: bool = False) -> Observation:
    """One run of the cpu_growth kind, in a process of its own whose CPU time (with everything
    it starts) its parent reads: with no `repeats`, one call under the counter (what it saw);
    else `repeats` + 1 plain calls (the counter's cost per operation would count as work), each
    after the first on inputs of its own (`fresh_case`), so no call can reuse an earlier one's
    answer. Every call's result is reduced to one number (`projection`) that the judge
    compares with the reference's on the same inputs: work that was skipped, memoised or done
    wrong shows. With `watch`, the call under the counter also runs under the autograd watch
    (count_autograd_runs, without the profiler, whose cost per operation would stop honest
    loops at the cap), every timed call under the spy on autograd's engine and a count of
    the tensors autograd saves for a backward (neither costs anything until autograd runs;
    the count sees a graph recorded from TorchScript too), and "autograd" says how often
    autograd ran: code that answers the watched call by hand and the timed ones through
    autograd meets it in both.
    With `reference` (a round's folder and a part id), the reference's function instead: a
    baseline, with no candidate code in the process."""
    if reference is not None:
        api = reference_api(api, *reference)
    fn = api.function(function)
    weights = Weights(nonce)
    count = autograd = 0
    with seeing_autograd(watch) as seen:
        if repeats:
            value, raised = api.call(fn, *build_args(api, case, call, args))
        else:
            counter, built = _counter(api, measure), build_args(api, case, call, args)
            if watch:
                counted, raised, autograd = count_autograd_runs(api, counter, fn, *built,
                                                                profiled=False)
            else:
                counted, raised = api.call(counter, fn, *built)
            value, count = (counted[0], int(counted[1])) if counted else (None, 0)
        projections = [projection(api, value, weights)]
        cases = fresh_cases(case, nonce, repeats)
        for index in range(1, repeats + 1 if raised is None else 0):
            value, raised = api.call(fn, *build_args(api, cases(index), call, args))
            if raised is not None:
                break
            projections.append(projection(api, value, weights))
        autograd += seen()
    if watch and refused_for_hooks(raised):
        raised, autograd = None, autograd + 1
    return {"raised": as_dict(raised), "count": count, "autograd": int(autograd),
            "projections": projections}


FRESH_SPREAD = 0.05
"""How far a timed call's inputs stray from the case's: each entry scaled by a factor within
5% of 1, so the inputs keep the case's conditioning while no two calls share a value."""


def fresh_cases(case: CaseData, nonce: int, repeats: int) -> Callable[[int], CaseData]:
    """Call `index`'s case (1 to `repeats`): its floating-point inputs rescaled entry by entry,
    each entry x by 1 + s * b, b a pattern of the process (one draw per entry, in [-1, 1]) and
    s the call's own (within FRESH_SPREAD): every call's inputs differ from every other's in
    every entry. The judge's `nonce` seeds both. A call's inputs cost two passes over them, and
    the process one draw per entry: a harness cost growing with the inputs' size counts as the
    candidate's work and the reference's alike, and would dilute the difference between them."""
    rng = np.random.default_rng([nonce, repeats])
    inputs = {name: np.asarray(value) for name, value in case["inputs"].items()}
    patterns = {name: rng.uniform(-1.0, 1.0, a.shape) for name, a in inputs.items()
                if np.issubdtype(a.dtype, np.floating)}
    scales = rng.uniform(-FRESH_SPREAD, FRESH_SPREAD, repeats + 1)

    def rescaled(a: np.ndarray, pattern: np.ndarray, scale: float) -> np.ndarray:
        factor = pattern * scale
        factor += 1.0
        factor *= a
        return factor.astype(a.dtype, copy=False)

    def at(index: int) -> CaseData:
        return {**case, "inputs": {
            name: rescaled(a, patterns[name], scales[index]) if name in patterns else a
            for name, a in inputs.items()}}

    return at


class Weights:
    """The random weights of the projections of a process's calls, drawn once per result size
    (`nonce` seeds them, so the reference's process draws the same). One set serves every call:
    each call's inputs are its own, and so is the result they weigh."""

    def __init__(self, nonce: int) -> None:
        self.nonce = nonce
        self._by_size: dict[int, tuple[np.ndarray, np.ndarray]] = {}

    def __call__(self, size: int) -> tuple[np.ndarray, np.ndarray]:
        """(the weights, their absolute values) for a result of `size` numbers."""
        if size not in self._by_size:
            drawn = np.random.default_rng([self.nonce, size]).standard_normal(size)
            self._by_size[size] = drawn, np.abs(drawn)
        return self._by_size[size]


def projection(api: Api, value: Any, weights: Weights) -> list[float] | None:
    """A call's result as [its dot product with random weights, the scale of that sum (the sum
    of the absolute products)], for comparing results without sending them; None when the
    result is not made of arrays and numbers."""
    try:
        tree = read_tree(api, value)
    except CandidateFault:
        return None
    leaves: list[np.ndarray] = []

    def flatten(node: Any) -> None:
        if isinstance(node, dict):
            for key in sorted(node):
                flatten(node[key])
        elif isinstance(node, list):
            for item in node:
                flatten(item)
        else:
            leaves.append(np.asarray(node, dtype=np.float64).ravel())

    try:
        flatten(tree)
    except (TypeError, ValueError):
        return None
    flat = np.concatenate(leaves) if len(leaves) != 1 else leaves[0]
    signed, absolute = weights(flat.size)
    return [float(flat @ signed), float(np.abs(flat) @ absolute)]


def reference_api(api: Api, folder: str, part_id: str) -> Api:
    """The round's reference for one part, as a probe in a baseline child may use it."""
    from grader.engine.references import load_reference_part
    from grader.engine.rounds import Round

    round_ = Round.load(Path(folder))
    module = load_reference_part(round_, round_.part(part_id), api.flavor)

    def other_part(name: str) -> ModuleType:
        """The reference of the part whose module is `name` (a helper that runs an earlier
        part, as the candidate's own is run beside the candidate's)."""
        part = next((p for p in round_.parts if p.module == name), None)
        if part is None:
            raise ImportError(f"the round has no part whose module is {name}")
        return load_reference_part(round_, part, api.flavor)

    return Api(module, api.backend, round_.reference_dir(api.flavor), api.helpers, other_part)


@probe
def chain_depth(api: Api, cases: Sequence[CaseData], run: str,
                unit: str = "matrix", watch: bool = False) -> Observation:
    """The longest chain of dependent products (of matrices, or with the unit "element" of
    elements too) behind what `run(api, natives)` returns, per case (see grader.probes.depth);
    with `watch`, under seeing_autograd too ("autograd": how often it ran)."""
    from grader.probes.depth import numpy_depth, torch_depth

    helper, depths = api.helper(run), list[Any]()
    with seeing_autograd(watch) as seen:
        for case in cases:
            if api.flavor == "torch":
                natives = {n: api.backend.native(np.asarray(a))
                           for n, a in case["inputs"].items()}
                with torch_depth(unit) as depth:
                    value, raised = api.call(helper, api, natives)
                    found = depth(value)
            else:
                with numpy_depth(unit) as (wrap, depth):
                    natives = {n: wrap(api.backend.native(np.asarray(a)))
                               for n, a in case["inputs"].items()}
                    value, raised = api.call(helper, api, natives)
                    found = depth(value)
            if watch and refused_for_hooks(raised):
                return {"raised": None, "depths": depths, "autograd": seen() + 1}
            if raised:
                return {"raised": raised.as_dict(), "depths": depths, "autograd": seen()}
            depths.append(found)
        return {"raised": None, "depths": depths, "autograd": seen()}


@probe
def module_string(api: Api, name: str) -> Observation:
    """A module-level string the candidate writes (an EXPLANATION)."""
    if not hasattr(api.module, name):
        return {"type": None, "text": None}
    value = getattr(api.module, name)
    return {"type": type(value).__name__, "text": value if isinstance(value, str) else None}


@probe
def nothing(api: Api) -> None:
    """The probe of a check that is not run (it cannot apply here, and its figures were not
    asked for)."""
    return None


def resolve(api: Api, name: str) -> Callable[..., Any]:
    """A probe by name: a generic one, or `round:<name>` from the round's probes module."""
    if name.startswith("round:"):
        return api.helper(name.removeprefix("round:"))
    if name not in PROBES:
        raise CandidateFault(f"the grader has no probe {name!r}")
    return PROBES[name]


MUTANT_CPU_S = 0.5
"""CPU seconds one mutant may spend on all its cases at most: a slip in a loop's step can make
a loop that never ends."""
MUTANT_SLOWDOWN = 20.0
"""How many times the unmutated reference's CPU time on the same cases a mutant may spend (but
at least MUTANT_FLOOR_S): a slip that names a candidate's mistake changes what is computed, not
its cost many times over, while a loop that never ends would otherwise hold each of its
mutants for the whole MUTANT_CPU_S (five such took 2.5 of 2.9 s in one diagnosis)."""
MUTANT_FLOOR_S = 0.05
"""The least CPU time a mutant is given, well above the timer's resolution and the cost of
loading its module."""
MUTANTS_CPU_S = 4.0
"""CPU seconds all the mutants of a diagnosis may spend, shared among its stages by their
number of mutants (mutant_calls' `budget_s`): those not run by then count as not run (the
diagnosis is a hint's worth, never a check's timeout)."""


OUT_OF_TIME = "out of time"
"""mutant_calls' answer, on each case, for a mutant it stopped for time: unlike one that would
not load, a mutant that might have finished on a quieter machine (a worker does not keep the
answer, see grader.runner.worker._diagnosis_frame)."""


class Statements:
    """A module's source split into its top-level statements, each compiled alone, once: a
    mutant changes one statement inside one of them (a function, a class), so it is loaded by
    compiling that one again and running the others' code as compiled (compiling the whole
    module for each of a thousand mutants cost three times what running them did). Where the
    lines after the changed statement moved, theirs are compiled again at their new place, once
    per shift: every line number is the mutant's own, as a raise's `where` reads it."""

    def __init__(self, original: str, filename: str) -> None:
        tree = ast.parse(original)
        self.filename = filename
        self.lines = original.splitlines(True)
        self.spans = [(_first_line(node) - 1, node.end_lineno or node.lineno)
                      for node in tree.body]
        self.calls = [not isinstance(node, ast.Import | ast.ImportFrom | ast.Expr)
                      for node in tree.body]
        self.flags = 0
        for node in tree.body:
            if isinstance(node, ast.ImportFrom) and node.module == "__future__":
                for alias in node.names:
                    self.flags |= getattr(__future__, alias.name).compiler_flag
        self.doc = ast.get_docstring(tree, clean=False)
        self.codes: dict[tuple[int, int], CodeType] = {}
        imported = sorted(symbol.get_name() for symbol in symtable.symtable(
            original, filename, "exec").get_symbols() if symbol.is_imported())
        self.imported = f"if 0: import {', '.join(imported)}\n" if imported else "\n"

    @classmethod
    def of(cls, original: str | None, filename: str) -> Statements | None:
        """None where there is no original, or its statements cannot be loaded one by one
        (it does not parse, or two of them share a line)."""
        if original is None:
            return None
        try:
            statements = cls(original, filename)
        except (SyntaxError, ValueError, RecursionError, MemoryError, AttributeError):
            return None
        ends = [end for _, end in statements.spans]
        if any(start < end for (start, _), end in zip(statements.spans[1:], ends, strict=False)):
            return None
        return statements

    def _compiled(self, index: int, text: str, first: int) -> CodeType:
        """Statement `index` as `text`, compiled as if it began on line `first` + 1 (blank
        lines before it cost the parser next to nothing) in its module: the compiler calls a
        module's function through a name the module imports in a way of its own, so a
        statement that may call one (not an import, not a docstring) has a first line that
        imports them all, in a block that never runs."""
        head = self.imported + "\n" * (first - 1) if first and self.calls[index] else \
            "\n" * first
        return cast(CodeType, compile(head + text, self.filename, "exec", flags=self.flags))

    def _code(self, index: int, shift: int) -> CodeType:
        if (index, shift) not in self.codes:
            start, end = self.spans[index]
            self.codes[index, shift] = self._compiled(index, "".join(self.lines[start:end]),
                                                      start + shift)
        return self.codes[index, shift]

    def load(self, source: str, namespace: dict[str, Any]) -> bool:
        """Run `source` (the original with one top-level statement changed) in `namespace`;
        False, having run nothing, where the change is not inside one top-level statement."""
        codes = self.compiled(source)
        if codes is None:
            return False
        if self.doc is not None:
            namespace["__doc__"] = self.doc
        for code in codes:
            exec(code, namespace)
        return True

    def compiled(self, source: str) -> list[CodeType] | None:
        """`source`'s code, a code object per top-level statement, each as compiling the whole
        of `source` makes it (line numbers included); None where the change from the original
        is not inside one top-level statement."""
        lines = source.splitlines(True)
        shift = len(lines) - len(self.lines)
        shortest = min(len(lines), len(self.lines))
        same_head = next((i for i in range(shortest) if lines[i] != self.lines[i]), shortest)
        same_tail = next((i for i in range(shortest - same_head)
                          if lines[-1 - i] != self.lines[-1 - i]), shortest - same_head)
        changed = (same_head, len(self.lines) - same_tail)
        index = next((i for i, (start, end) in enumerate(self.spans)
                      if start <= changed[0] and changed[1] <= end), None)
        if index is None:
            return None
        start, end = self.spans[index]
        codes = [self._code(i, 0) for i in range(index)]
        codes.append(self._compiled(index, "".join(lines[start:end + shift]), start))
        codes += [self._code(i, shift) for i in range(index + 1, len(self.spans))]
        return codes


def _first_line(node: ast.stmt) -> int:
    """The line a statement starts on, its decorators included."""
    decorators: list[ast.expr] = getattr(node, "decorator_list", None) or []
    return min([node.lineno, *(d.lineno for d in decorators)])


NOT_RIGHT = "not right"
"""mutant_calls' answer, in a repair, on each case from the first where a variant of the
candidate's code raised or answered exactly as the code does (the repair runs it only on cases
the code gets wrong): the variant is wrong there, and its other cases are not run."""


def _line_of(raised: dict[str, Any]) -> str:
    """The line a raise's `where` names, its number and its code as Python reads it, whatever
    file name it gives and however its text is spelled: a variant's changed function is
    loaded from text unparsed (its quotes, spacing and parentheses not the file's)."""
    number, _, code = str(raised.get("where", "")).rpartition(", line ")[2].partition(": ")
    try:
        code = ast.dump(ast.parse(code.strip()))
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        pass
    return f"{number}: {code}"


def _by_a_raise(raised: dict[str, Any]) -> bool:
    """Whether a raise's `where` names a `raise` statement (a check of the file's own), not
    a library call that broke on what got through."""
    return str(raised.get("where", "")).rpartition(", line ")[2].partition(": ")[2] \
        .lstrip().startswith("raise")


def _rejects(seen: Observation, error: str) -> bool:
    """Whether a call raised `error` (or a subclass of it)."""
    raised = seen.get("raised")
    return isinstance(raised, dict) and error in raised.get("bases", ())


def _same_tree(a: Any, b: Any) -> bool:
    """Whether two answers, as one_call reads them (arrays, numbers, and lists, tuples and
    dicts of them), are the same to the bit (NaN where NaN is); False where they cannot be
    compared."""
    try:
        if isinstance(a, dict) and isinstance(b, dict):
            return a.keys() == b.keys() and all(_same_tree(a[k], b[k]) for k in a)
        if isinstance(a, list | tuple) and isinstance(b, list | tuple):
            return len(a) == len(b) and all(_same_tree(x, y) for x, y in zip(a, b, strict=True))
        x, y = np.asarray(a), np.asarray(b)
        return x.dtype == y.dtype and x.shape == y.shape and x.dtype != object and \
            bool(np.array_equal(x, y, equal_nan=x.dtype.kind in "fc"))
    except Exception:  # noqa: BLE001 - the answers of candidate code
        return False


class _MutantOverran(BaseException):
    """A mutant ran past MUTANT_CPU_S (a BaseException: the safe call around each call must
    not take it for the mutant's own error and go on to the next case)."""


@probe
def mutant_calls(api: Api, sources: Sequence[str], reference: Sequence[str],
                 function: str | None, cases: Sequence[CaseData], call: str | None = None,
                 args: Sequence[str] = (), read: str | None = None, run: str | None = None,
                 returns: str = "array", budget_s: float = MUTANTS_CPU_S,
                 original: str | None = None, right: Sequence[int] = (),
                 raising: Sequence[int] = (), guarding: Sequence[int] = (),
                 error: str = "ValueError") -> list[list[dict[str, Any] | str | None]]:
    """Each mutated source of the reference's part module (grader.checks.mutants), run on the
    cases: per mutant, on each case, {"value": its value, "raised": None} or {"value": None,
    "raised": the exception's type name, "message": its message, "where": its line}; None on
    every case for a mutant that would not load, OUT_OF_TIME on every case for one that ran past
    its time (or came after the mutants' time ran out); in a repair, NOT_RIGHT from the first
    case where a variant raised or answered as the code does. One answer per (mutant, case), each
    depending on its mutant and case alone, so that a worker keeps answers, not whole runs.
    In a baseline child the sources are the reference's (`reference`: its round folder and
    part); with no `reference`, they are variants of the candidate's own part, in place of
    the module this child imported (grader.checks.mutants.repair), in a child that runs
    candidate code. `original`: the source the mutants were made of, where the caller gives
    it: each mutant then compiles only the statement of the module it changed (Statements),
    which is most of what a mutant cost. In a repair, `raising`: the cases a fix must reject
    with `error` (a validation's malformed inputs): a variant that raises it there is right
    there, one that does not cannot be right on them all; `guarding`: those of them a fix
    must reject only where the code rejects them now, at the same line or by a `raise` of
    its own (a fix keeps the checks that work: a guard left out lets a wrong size through to
    a matmul that raises the same error elsewhere), answered {"value": None, "raised": its
    type, "guard": "held"}, each of the others {"value": None, "raised": None, "guard":
    "free"}."""
    import importlib
    import linecache
    import signal
    from types import ModuleType

    base = reference_api(api, *reference) if reference else api
    package = base.module.__name__.rpartition(".")[0]

    def overran(signum: int, frame: Any) -> None:
        raise _MutantOverran

    signal.signal(signal.SIGVTALRM, overran)
    began = time.process_time()
    unmutated = [one_call(base, function, case, call, args, read, run, returns,
                          watch_inputs=not reference) for case in cases]
    allowed = min(MUTANT_CPU_S, max(MUTANT_FLOOR_S,
                                    MUTANT_SLOWDOWN * (time.process_time() - began)))
    began = time.process_time()
    results: list[list[dict[str, Any] | str | None]] = []
    statements = Statements.of(original, base.module.__file__ or "<mutant>")
    for source in sources:
        if time.process_time() - began > budget_s:
            results.append([OUT_OF_TIME] * len(cases))
            continue
        module = ModuleType(base.module.__name__)
        module.__package__ = package
        module.__file__ = base.module.__file__
        mutant = Api(module, base.backend, base.folder, base.helpers,
                     lambda name: importlib.import_module(f"{package}.{name}"))
        filename = base.module.__file__ or "<mutant>"
        # A raise's `where` quotes the mutant's own line, not the reference file's line of that
        # number (a step left out moves every line after it): its text is the file's here.
        linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
        signal.setitimer(signal.ITIMER_VIRTUAL, allowed)
        try:
            if statements is None or not statements.load(source, module.__dict__):
                exec(compile(source, filename, "exec"), module.__dict__)
            values: list[dict[str, Any] | str | None] = []
            for number, (case, own) in enumerate(zip(cases, unmutated, strict=True)):
                seen = one_call(mutant, function, case, call, args, read, run, returns,
                                watch_inputs=not reference)
                raised = seen["raised"]
                if not reference and number in guarding:
                    if not _rejects(own, error):
                        values.append({"value": None, "raised": None, "guard": "free"})
                        continue
                    if raised is None or _line_of(raised) != _line_of(own["raised"]) \
                            and not _by_a_raise(raised):
                        values += [NOT_RIGHT] * (len(cases) - len(values))
                        break
                    values.append({"value": None, "raised": raised["type"], "guard": "held"})
                    continue
                if not reference and number in raising:
                    if raised is None or error not in raised["bases"]:
                        values += [NOT_RIGHT] * (len(cases) - len(values))
                        break
                    values.append({"value": None, "raised": raised["type"],
                                   "where": raised["where"]})
                    continue
                if not reference and (raised or number not in right
                                      and _same_tree(seen["value"], own["value"])
                                      or seen.get("wrote_inputs") and not own.get("wrote_inputs")):
                    # A variant of the candidate's code that raises, or answers as the code
                    # does on a case the code is known to get wrong (all but those in
                    # `right`), cannot be right on them all; nor is one that writes into
                    # its inputs where the code does not (`out=a`) a fix.
                    values += [NOT_RIGHT] * (len(cases) - len(values))
                    break
                values.append({"value": None if raised else seen["value"],
                               "raised": raised["type"] if raised else None,
                               **({"message": raised["message"], "where": raised["where"]}
                                  if raised else {})})
            results.append(values)
        except _MutantOverran:
            results.append([OUT_OF_TIME] * len(cases))
        except Exception:  # noqa: BLE001 - a mutant may break anything
            results.append([None] * len(cases))
        finally:
            signal.setitimer(signal.ITIMER_VIRTUAL, 0)
            linecache.cache.pop(filename, None)
    return results
