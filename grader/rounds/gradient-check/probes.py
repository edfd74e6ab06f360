"""Gradient check, candidate side: the f and grad_f each check hands the candidate's code, built
here from plain data, and what the probes record of the calls.

Everything here runs in the child beside candidate code and returns plain data; the verdicts,
and every estimate or truth they compare against, are made in checks.py. A case arrives as
{"inputs": {"x": array} (or {"a", "b"}), "label": str, "extra": {"f": spec, "eps", "view",
"tol", ...}}; the spec names a test function of functions.py.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from grader.round_api.probes import Api, CandidateFault, Round, as_dict, load_module

FUNCTIONS = load_module(Round.load(Path(__file__).resolve().parent), "functions")
NUMERICAL = "numerical_gradient"
RELATIVE = "relative_error"
CHECK = "check_gradient"
RECORDED_CALLS = 64
"""Calls of f whose arguments a probe keeps (a runaway loop must not fill the pipe)."""


# --- the callables the candidate is given ----------------------------------------------------


def build_f(spec: dict[str, Any]) -> Callable[[Any], Any]:
    return lambda x: black_box_value(spec, x)


def black_box_value(spec: dict[str, Any], x: Any) -> Any:
    """f(x) as a numerical gradient meets it: values in, a value out, and nothing autograd can
    differentiate (x is read detached): finite differences are how a gradient of a function
    given only as values is found, and code that asks autograd for f's exact gradient instead
    gets an error, not the answer."""
    detach = getattr(x, "detach", None)
    return FUNCTIONS.value(spec, detach() if callable(detach) else x)


def build_grad_f(api: Api, claimed: Any, shape: list[int] | None = None) -> Callable[[Any], Any]:
    """The claimed gradient, as values the judge computed at the x the check hands over
    (exact, or wrong where the judge made it wrong): a fresh copy per call, reshaped to
    `shape` where the check hands a gradient of the wrong shape. No gradient is computed on
    this side."""
    def grad_f(x: Any) -> Any:
        grad = api.backend.native(np.asarray(claimed))
        return grad.reshape(shape) if shape is not None else grad

    return grad_f


class Recorder:
    """An f that remembers the argument of every call: shape, dtype, and its values."""

    def __init__(self, api: Api, spec: dict[str, Any]) -> None:
        self.api, self.spec = api, spec
        self.calls = 0
        self.seen: list[np.ndarray] = []

    def __call__(self, x: Any) -> Any:
        self.calls += 1
        if len(self.seen) < RECORDED_CALLS:
            self.seen.append(self.api.backend.to_numpy(x, "the argument of f"))
        return black_box_value(self.spec, x)


def point(api: Api, case: dict[str, Any]) -> Any:
    """x as the candidate receives it: the case's array, or a strided view cut out of it."""
    x = api.backend.native(case["inputs"]["x"])
    view = case["extra"].get("view")
    return FUNCTIONS.apply_view(x, view) if view else x


def eps_args(case: dict[str, Any]) -> tuple[Any, ...]:
    """eps when the case names one; else the default is used."""
    eps = case["extra"].get("eps")
    return () if eps is None else (eps,)


# --- Part 1 ------------------------------------------------------------------------------------


def f_x_eps(api: Api, case: dict[str, Any]) -> tuple[Any, ...]:
    return (build_f(case["extra"]["f"]), point(api, case), *eps_args(case))


def recorded_calls(api: Api, cases: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Every argument f was called with, x (and the array it is a view of) afterwards."""
    rows = []
    for case in cases:
        base = api.backend.native(case["inputs"]["x"])
        view = case["extra"].get("view")
        x = FUNCTIONS.apply_view(base, view) if view else base
        f = Recorder(api, case["extra"]["f"])
        _, raised = api.call(api.function(NUMERICAL), f, x, *eps_args(case))
        rows.append({"raised": as_dict(raised), "calls": f.calls, "seen": f.seen,
                     "after": api.backend.to_numpy(x, "x"),
                     "base_after": api.backend.to_numpy(base, "x")})
        if raised:
            break
    return rows


def count_calls(api: Api, cases: list[dict[str, Any]]) -> list[dict[str, Any]]:
    rows = []
    for case in cases:
        f = Recorder(api, case["extra"]["f"])
        value, raised = api.call(api.function(NUMERICAL), f, point(api, case))
        shape = list(getattr(value, "shape", ())) if raised is None else None
        rows.append({"raised": as_dict(raised), "calls": f.calls, "shape": shape})
    return rows


def result_memory(api: Api, cases: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """What came back: its type, shape, dtype and device, and whether it is (in) x's memory."""
    backend, rows = api.backend, list[dict[str, Any]]()
    for case in cases:
        x = point(api, case)
        value, raised = api.call(api.function(NUMERICAL), build_f(case["extra"]["f"]), x)
        if raised:
            return rows + [{"raised": raised.as_dict()}]
        backend.to_numpy(value, "the gradient")
        rows.append({"raised": None, "shape": list(value.shape),
                     "dtype": backend.dtype_name(value), "device": backend.device_name(value),
                     "want": [list(x.shape), backend.dtype_name(x), backend.device_name(x)],
                     "shared": value is x or backend.shares_memory(value, x)})
    return rows


# --- Part 2 ------------------------------------------------------------------------------------


def _number(value: Any, what: str) -> float:
    """A returned scalar as a Python float, whatever kind of scalar it is."""
    if isinstance(value, bool):
        raise CandidateFault(f"{what} is a bool; expected a float")
    if isinstance(value, int | float | np.generic):
        return float(value)
    size = getattr(value, "size", None)
    count = value.numel() if callable(getattr(value, "numel", None)) else size
    if count == 1:
        return float(value.item())
    raise CandidateFault(f"{what} is a {type(value).__module__}.{type(value).__name__} "
                         f"with {count} entries; expected one float")


def as_number(api: Api, args: tuple[Any, ...], value: Any) -> float:
    return _number(value, "relative_error(a, b)")


def ab(api: Api, case: dict[str, Any]) -> tuple[Any, Any]:
    return api.backend.native(case["inputs"]["a"]), api.backend.native(case["inputs"]["b"])


def _relative(api: Api, a: np.ndarray, b: np.ndarray) -> tuple[float | None, Any]:
    value, raised = api.call(api.function(RELATIVE), api.backend.native(a), api.backend.native(b))
    return (None, raised) if raised else (_number(value, "relative_error(a, b)"), None)


def transformed(api: Api, case: dict[str, Any], scales: list[float]) -> dict[str, Any]:
    """relative_error(a, b), swapped, and with both scaled by each factor."""
    a, b = case["inputs"]["a"], case["inputs"]["b"]
    pairs = {"(a, b)": (a, b), "(b, a)": (b, a)}
    pairs |= {f"({s:g} a, {s:g} b)": (a * s, b * s) for s in scales}
    values: dict[str, Any] = {}
    for name, (left, right) in pairs.items():
        value, raised = _relative(api, left, right)
        if raised:
            return {"raised": raised.as_dict(), "values": values}
        values[name] = value
    return {"raised": None, "values": values}


def each_number(api: Api, cases: list[dict[str, Any]]) -> list[dict[str, Any]]:
    rows = []
    for case in cases:
        value, raised = _relative(api, case["inputs"]["a"], case["inputs"]["b"])
        rows.append({"label": case["label"], "value": value, "raised": as_dict(raised)})
    return rows


# --- Part 3 ------------------------------------------------------------------------------------


def check_args(api: Api, case: dict[str, Any]) -> tuple[Any, ...]:
    extra = case["extra"]
    given = (build_f(extra["f"]), build_grad_f(api, extra["claimed"], extra.get("grad_shape")),
             point(api, case))
    return given if extra.get("tol") is None else (*given, extra["tol"])


def _index(index: Any) -> dict[str, Any]:
    """worst_index as a list of ints, and whether it came as one flat int."""
    if index is None:
        return {"index": None, "flat": False}
    if isinstance(index, int | np.integer) and not isinstance(index, bool):
        return {"index": [int(index)], "flat": True}
    if hasattr(index, "tolist"):
        index = index.tolist()
    if isinstance(index, int):
        return {"index": [index], "flat": True}
    try:
        return {"index": [int(i) for i in index], "flat": False}
    except (TypeError, ValueError) as exc:
        raise CandidateFault(f"worst_index should be a tuple of ints, got {index!r}") from exc


def _flag(value: Any) -> bool:
    """ok as a Python bool: a bool, a numpy bool or a one-entry bool array or tensor."""
    if isinstance(value, bool | np.bool_):
        return bool(value)
    if getattr(value, "dtype", None) is not None and "bool" in str(value.dtype):
        return bool(value.item())
    raise CandidateFault(f"ok is a {type(value).__name__}; expected a bool")


def read_check(value: Any) -> dict[str, Any]:
    """(ok, worst_index, worst_error) read leniently (0-d arrays and tensors taken as numbers);
    the types as they came, for the check that is strict about them."""
    if not isinstance(value, tuple | list) or len(value) != 3:
        raise CandidateFault(f"{CHECK} should return (ok, worst_index, worst_error); it "
                             f"returned {type(value).__name__} {str(value)[:80]}")
    ok, index, error = value
    if _looks_like_an_error(index) and not _looks_like_an_error(error):
        raise CandidateFault(f"{CHECK} returned worst_index {str(index)[:40]} and worst_error "
                             f"{str(error)[:40]}: the two look swapped; the order is (ok, "
                             "worst_index, worst_error)")
    return {"ok": _flag(ok), "error": _number(error, "worst_error"),
            **_index(index),
            "types": {"ok": isinstance(ok, bool | np.bool_), "index": index is None or (
                isinstance(index, tuple) and all(isinstance(i, int | np.integer) for i in index)),
                "error": isinstance(error, float)},
            "type_names": [type(v).__name__ for v in value]}


def checked(api: Api, cases: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """check_gradient on each case: what it returned, and every warning it gave."""
    rows = []
    for case in cases:
        args = check_args(api, case)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            value, raised = api.call(api.function(CHECK), *args)
        said = [{"category": w.category.__name__, "user": issubclass(w.category, UserWarning),
                 "message": str(w.message)[:300]} for w in caught]
        row = {"label": case["label"], "raised": as_dict(raised), "warnings": said}
        rows.append(row | ({} if raised else read_check(value)))
    return rows


def _looks_like_an_error(value: Any) -> bool:
    """Whether a field of check_gradient's result reads as worst_error does: a float (or a
    float scalar), not an index."""
    return isinstance(value, float | np.floating) or getattr(value, "ndim", None) == 0 and \
        "float" in str(getattr(value, "dtype", ""))


def check_quadratic(api: Api, natives: dict[str, Any]) -> Any:
    """check_gradient on a quadratic whose matrix is an input too (both must stay unchanged)."""
    A = natives["A"]
    spec = {"kind": "quadratic", "A": api.backend.to_numpy(A, "A")}
    claimed = api.backend.to_numpy(natives["grad"], "grad")
    return as_dict(api.call(api.function(CHECK), build_f(spec), build_grad_f(api, claimed),
                            natives["x"], 1e-5)[1])


# --- the interviewer's follow-up demonstrations ---------------------------------------------


def followup_part1(api: Api, spec: dict[str, Any], x: np.ndarray,
                   steps: list[float]) -> dict[str, Any]:
    """The candidate's numerical_gradient at each step, in float64 and in float32."""
    found: dict[str, list[np.ndarray]] = {}
    for dtype in ("float64", "float32"):
        found[dtype] = []
        for eps in steps:
            value, raised = api.call(api.function(NUMERICAL), build_f(spec),
                                     api.backend.native(x.astype(dtype)), eps)
            if raised:
                return {"raised": raised.as_dict()}
            found[dtype].append(api.backend.to_numpy(value, "the gradient").astype(np.float64))
    return {"raised": None, "estimates": found}


def followup_part2(api: Api, pairs: dict[str, list[np.ndarray]]) -> dict[str, Any]:
    """The candidate's relative_error on the interviewer's pairs."""
    values = {}
    for name, (a, b) in pairs.items():
        value, raised = _relative(api, a, b)
        values[name] = None if raised else value
    return {"raised": None, "values": values}


def followup_part3(api: Api, cases: list[dict[str, Any]]) -> dict[str, Any]:
    """The candidate's check_gradient at a kink and in float32."""
    return {"raised": None, "rows": checked(api, cases)}
