"""Gradient check, judge side: the test functions and points, the truth, the known mistakes, the
special judges and the follow-ups' readings.

checks.toml names everything here that a check uses. Nothing in this module runs beside
candidate code: exact gradients come from gradients.py in float64, central differences at a
given eps and relative errors from the numpy references.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np

from grader.round_api.judge import (
    Case,
    Context,
    Plan,
    Round,
    Verdict,
    drawn_sizes,
    failed,
    format_raised,
    load_module,
    load_reference_part,
    passed,
    raised_verdict,
)

ROUND = Round.load(Path(__file__).resolve().parent)
FUNCTIONS = load_module(ROUND, "functions")
GRADIENTS = load_module(ROUND, "gradients")
DEFAULT_EPS = 1e-6
KINK_WORDS = re.compile(r"kink|differentiab", re.I)


@cache
def _reference(part_id: str) -> Any:
    return load_reference_part(ROUND, ROUND.part(part_id), "numpy")


# --- test functions and the points they are checked at -----------------------------------------


def _signed(rng: np.random.Generator, shape: tuple[int, ...], low: float,
            high: float) -> np.ndarray:
    """Entries of magnitude in [low, high] with random signs: away from zero and kinks."""
    return rng.uniform(low, high, shape) * rng.choice([-1.0, 1.0], shape)


def _made(kind: str, rng: np.random.Generator,
          shape: tuple[int, ...]) -> tuple[dict[str, Any], np.ndarray]:
    """(spec, x) for one test function, float64, scaled so that f stays O(1) to O(10): the
    rounding of a central difference, about 1e-16 |f| / eps, then stays below the tolerance."""
    n = math.prod(shape)
    if kind == "quadratic":
        A = rng.standard_normal((n, n)) / math.sqrt(max(n, 1)) + np.eye(n)
        return {"kind": kind, "A": A}, rng.standard_normal(shape)
    if kind in ("product", "cubic", "relu", "abs"):
        spec: dict[str, Any] = {"kind": kind}
        if kind == "cubic":
            spec["c"] = _signed(rng, shape, 0.5, 1.5)
        if kind in ("relu", "abs"):
            spec["w"] = _signed(rng, shape, 0.5, 1.5)
        return spec, _signed(rng, shape, 0.5, 1.5)
    if kind == "logsumexp":
        return {"kind": kind}, rng.standard_normal(shape)
    d = shape[-1]
    W = np.eye(d) + 0.3 * rng.standard_normal(shape) / math.sqrt(d)
    return {"kind": "prefix-products loss", "dP": rng.standard_normal(shape)}, W


def _well_spread(spec: dict[str, Any], x: np.ndarray) -> bool:
    """No gradient entry close to zero (unless exactly zero): each entry's relative error then
    measures the gradient, not the rounding noise of the estimate."""
    g = np.abs(GRADIENTS.gradient(spec, x))
    floor = 0.02 * max(1.0, float(g.max(initial=0.0)))
    return bool(np.all((g == 0) | (g >= floor)))


def make(kind: str, rng: np.random.Generator, shape: tuple[int, ...], dtype: str = "float64",
         spread: bool = False, **extra: Any) -> Case:
    """A case of a freshly drawn test function (see case_of). `spread`: redraw until no
    gradient entry is near zero."""
    spec, x = _made(kind, rng, shape)
    for _ in range(100):
        if not spread or _well_spread(spec, x):
            break
        spec, x = _made(kind, rng, shape)
    return case_of(spec, x, dtype, **extra)


def case_of(spec: dict[str, Any], x: np.ndarray, dtype: str = "float64",
            **extra: Any) -> Case:
    """x in `dtype` (the base array when a view is given) and, in extra, the spec as "f" and
    any of eps, view (with its name, for the label) and tol."""
    view = extra.get("view")
    shown = FUNCTIONS.apply_view(x, view).shape if view else x.shape
    words = [f"{spec['kind']} at x of shape {tuple(shown)}", dtype]
    if view:
        words.insert(1, f"a {extra['name']} view")
    if extra.get("eps") is not None:
        words.append(f"eps={extra['eps']:g}")
    if extra.get("tol") is not None:
        words.append(f"tol={extra['tol']:g}")
    extra = {k: v for k, v in extra.items() if k != "name"}
    return Case({"x": x.astype(dtype)}, (("entries", math.prod(shown)),), dtype,
                label=", ".join(words), extra={"f": spec, **extra})


def point(case: Case) -> np.ndarray:
    """x as the candidate sees it (the view cut out), in float64, a contiguous copy."""
    x = case["x"].astype(np.float64)
    view = case.extra.get("view")
    return np.array(FUNCTIONS.apply_view(x, view) if view else x)


def _f(case: Case) -> Callable[[np.ndarray], float]:
    spec = case.extra["f"]
    return lambda x: float(FUNCTIONS.value(spec, x))


def _eps(case: Case) -> float:
    eps = case.extra.get("eps")
    return DEFAULT_EPS if eps is None else float(eps)


# --- Part 1 inputs ------------------------------------------------------------------------------

SMOOTH_SHAPES: tuple[tuple[str, tuple[int, ...]], ...] = (
    ("quadratic", (4,)), ("quadratic", (3, 4)), ("quadratic", (1,)), ("quadratic", ()),
    ("quadratic", (2, 3, 2)), ("product", (3,)), ("product", (2, 2)), ("logsumexp", (6,)),
    ("logsumexp", (2, 5)), ("cubic", (5,)), ("cubic", (1, 1, 3)),
    ("prefix", (3, 2, 2)), ("prefix", (4, 3, 3)),
)
FLOAT32_EPS = 1e-2
"""A step float32 can resolve: central differences at 1e-2 err by about 1e-5 either way."""
VIEWS: tuple[tuple[str, tuple[int, ...], list[Any]], ...] = (
    ("transposed", (3, 4), [[[None, None, None]] * 2, [1, 0]]),
    ("every-other-row", (6, 3), [[[None, None, 2], [None, None, None]], [0, 1]]),
    ("one-column", (4, 5), [[[None, None, None], [1, 2, None]], [0, 1]]),
    ("strided", (5, 6), [[[0, 5, 2], [1, 6, 2]], [0, 1]]),
    ("permuted", (2, 3, 4), [[[None, None, None]] * 3, [2, 0, 1]]),
)


def many(rng: np.random.Generator) -> list[Case]:
    """Every shape in float64 at the default eps; all but the 0-d one again in float32 at a
    step single precision can resolve; then a quadratic at x of a shape the run's seed draws,
    in each dtype (9 to 24 entries in float64, 2 to 5 by 2 to 5 in float32: the sizes the
    fixed shapes' tolerances hold at): code cannot be right at the fixed shapes alone."""
    cases = [make(kind, rng, shape) for kind, shape in SMOOTH_SHAPES]
    cases += [make(kind, rng, shape, "float32", eps=FLOAT32_EPS)
              for kind, shape in SMOOTH_SHAPES if shape]
    return cases + [make("quadratic", rng, drawn_sizes(rng, 1)),
                    make("quadratic", rng, drawn_sizes(rng, 2, (2, 5)), "float32",
                         eps=FLOAT32_EPS)]


def views(rng: np.random.Generator) -> list[Case]:
    """Non-contiguous x: the base array is the input, the view is cut out of it in the child."""
    cases = []
    for name, base_shape, view in VIEWS:
        base = rng.standard_normal(base_shape)
        spec = _made("quadratic", rng, FUNCTIONS.apply_view(base, view).shape)[0]
        cases.append(case_of(spec, base, view=view, name=name))
    return cases


def step_sizes(rng: np.random.Generator) -> list[Case]:
    """Large steps, where central differences differ from the derivative by eps^2 f''' / 6."""
    return [make(kind, rng, shape, eps=eps) for kind, shape, eps in (
        ("cubic", (4,), 1e-1), ("cubic", (4,), 1e-2), ("cubic", (4,), 1e-3),
        ("logsumexp", (3, 2), 1e-1), ("logsumexp", (3, 2), 1e-2))]


def malformed_part1(rng: np.random.Generator) -> list[Case]:
    """eps that is not a positive finite number, and an x of integer dtype."""
    spec, x = _made("quadratic", rng, (2, 3))
    return [Case({"x": x}, label=f"eps = {eps!r}", extra={"f": spec, "eps": eps})
            for eps in (0.0, -1e-6, math.nan, math.inf)] + [
        Case({"x": np.arange(6).reshape(2, 3)}, label="x of integer dtype", extra={"f": spec})]


def _round_trip_fails(v: np.ndarray, eps: float) -> np.ndarray:
    """Entries that adding and subtracting eps (either way, by eps or 2 eps) does not bring
    back bit for bit."""
    return (((v + eps) - eps != v) & (((v + eps) - 2 * eps) + eps != v)
            & ((v - eps) + eps != v) & (((v - eps) + 2 * eps) - eps != v))


def fragile(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    """float64 values that x[i] += eps; ...; x[i] -= eps cannot restore: tiny magnitudes, where
    x + eps rounds away bits of x (drawn until every entry is one)."""
    out = np.empty(math.prod(shape))
    for i in range(out.size):
        v = 0.0
        while not _round_trip_fails(np.array([v]), DEFAULT_EPS)[0]:
            v = float(_signed(rng, (), 1e-9, 1e-7))
        out[i] = v
    return out.reshape(shape)


def restore_cases(rng: np.random.Generator) -> list[Case]:
    """A vector, a transposed view, a scalar, float32, and a rank-3 x (where a loop over fewer
    axes than x has nudges a slab at once)."""
    quad = _made("quadratic", rng, (6,))[0]
    square = _made("quadratic", rng, (3, 2))[0]
    view = VIEWS[0][2]
    return [case_of(quad, fragile(rng, (6,))),
            case_of(square, fragile(rng, (2, 3)), view=view, name="transposed"),
            case_of(_made("quadratic", rng, ())[0], fragile(rng, ())),
            make("quadratic", rng, (5,), "float32", eps=1e-3),
            make("quadratic", rng, (2, 2, 2))]


def call_cases(rng: np.random.Generator) -> list[Case]:
    """Every rank up to three: a loop over fewer axes than x has is seen on any x of more. The
    rank-3 shape's counts of entries each loop that misses some would reach (the first axis,
    the first two, all but the last index of each, all but one) differ, so the counts tell
    those loops apart."""
    return [make("quadratic", rng, shape)
            for shape in ((), (3,), (2, 3), (0,), (2, 0), (2, 4, 3))]


def result_cases(rng: np.random.Generator) -> list[Case]:
    return [make("quadratic", rng, (3, 4), "float32"), make("logsumexp", rng, (5,))]


# --- Part 1 truth and mistakes -------------------------------------------------------------------


def exact_gradient(case: Case) -> np.ndarray:
    return GRADIENTS.gradient(case.extra["f"], point(case))


def central_at_eps(case: Case) -> np.ndarray:
    """The central difference at the case's eps, by the reference, in float64."""
    return _reference("part1").numerical_gradient(_f(case), point(case), _eps(case))


def _secant(case: Case, up: float, down: float, over: float) -> np.ndarray:
    """g[i] = (f(x + up e_i) - f(x + down e_i)) / over, steps in units of the case's eps."""
    f, x, eps = _f(case), point(case), _eps(case)
    g = np.empty_like(x)
    for i in np.ndindex(*x.shape):
        hi, lo = x.copy(), x.copy()
        hi[i] += up * eps
        lo[i] += down * eps
        g[i] = (f(hi) - f(lo)) / (over * eps)
    return g


def forward_difference(case: Case) -> np.ndarray:
    return _secant(case, 1, 0, 1)


def backward_difference(case: Case) -> np.ndarray:
    return _secant(case, 0, -1, 1)


def missing_two(case: Case) -> np.ndarray:
    return _secant(case, 1, -1, 1)


def flipped_sign(case: Case) -> np.ndarray:
    return _secant(case, -1, 1, 2)


def half_forward(case: Case) -> np.ndarray:
    """What a torch `saved = x[i]` (a view) gives: the minus side evaluated back at x."""
    return _secant(case, 1, 0, 2)


def default_step(case: Case) -> np.ndarray:
    """The central difference at 1e-6, whatever eps the case asked for."""
    return _reference("part1").numerical_gradient(_f(case), point(case), DEFAULT_EPS)


def never_perturbed(case: Case, actual: np.ndarray) -> bool:
    """An all-zero estimate of a gradient that is not zero: f never saw the nudges."""
    return bool(np.all(actual == 0)) and bool(np.any(exact_gradient(case) != 0))


# --- Part 1 special judges -------------------------------------------------------------------


def _bits(a: np.ndarray) -> np.ndarray:
    a = np.ascontiguousarray(a)
    return a.view(np.dtype(f"u{a.itemsize}")) if a.size else a


def _differ(a: np.ndarray, b: np.ndarray) -> list[tuple[int, ...]]:
    """Indices where a and b are not the same bits."""
    return [tuple(int(k) for k in i) for i in np.argwhere(_bits(a) != _bits(b))]


def _left_how(original: np.ndarray, found: np.ndarray, eps: float,
              params: dict[str, str]) -> str:
    """The hint for an entry that is not its original self: left perturbed, or restored by
    arithmetic (which rounds)."""
    v, w = original.astype(found.dtype), found
    step = np.asarray(eps, dtype=found.dtype)
    if w in (v + step, v - step):
        return params["left_hint"]
    return params["subtract_hint"]


def _restore_verdict(case: Case, row: dict[str, Any], params: dict[str, str]) -> Verdict | None:
    """None when every call saw x with at most one entry changed and x (and the array it is a
    view of) came back bit for bit; else what went wrong first."""
    where = case.describe()
    original = np.asarray(case["x"])
    view = case.extra.get("view")
    x0 = np.array(FUNCTIONS.apply_view(original, view)) if view else original
    eps = _eps(case)
    earlier: set[tuple[int, ...]] = set()
    for call, seen in enumerate(row["seen"], start=1):
        if seen.shape != x0.shape or seen.dtype != x0.dtype:
            return failed(f"{where}: call {call} of f got an array of shape {seen.shape} and "
                          f"dtype {seen.dtype}; x has shape {x0.shape} and dtype {x0.dtype}",
                          hint=params["argument_hint"])
        changed = _differ(seen, x0)
        fresh = [i for i in changed if i not in earlier]
        earlier = set(changed)
        if len(fresh) > 1:
            # An entry left over from an earlier one was changed in the call before too; two
            # or more changed here that were not were nudged together, by one write.
            return failed(f"{where}: call {call} of f saw {len(fresh)} entries of x nudged "
                          f"together ({', '.join(map(str, fresh[:3]))}"
                          f"{', ...' if len(fresh) > 3 else ''}): each call must see one entry "
                          "changed", hint=params["together_hint"])
        if len(changed) > 1:
            # The entry nudged for this call is one of them; the one left over from an earlier
            # entry is the one closest to its original (a rounding, or a nudge left in place).
            first = min(changed, key=lambda i: abs(float(seen[i]) - float(x0[i])))
            return failed(f"{where}: call {call} of f saw {len(changed)} entries of x changed "
                          f"({', '.join(map(str, changed[:3]))}): x{list(first)} was "
                          f"{float(x0[first])!r} and is {float(seen[first])!r}: an earlier entry "
                          "was not put back exactly",
                          hint=_left_how(x0[first], seen[first], eps, params))
    for name, before, after in (("x", x0, row["after"]), ("the array x is a view of",
                                                          original, row["base_after"])):
        changed = _differ(after, before)
        if changed:
            first = changed[0]
            return failed(f"{where}: afterwards {name} differs from the original in "
                          f"{len(changed)} entries, first at {list(first)}: "
                          f"{float(before[first])!r} became {float(after[first])!r}",
                          hint=_left_how(before[first], after[first], eps, params))
    return None


def restores(ctx: Context, params: dict[str, str]) -> Plan:
    """Every argument f was called with differs from x in at most one entry; x is returned
    bit for bit, a view's base too."""
    cases = restore_cases(ctx.rng())

    def judge(rows: list[dict[str, Any]]) -> Verdict:
        for case, row in zip(cases, rows, strict=False):
            if row["raised"]:
                return raised_verdict(case.describe(), row["raised"])
            verdict = _restore_verdict(case, row, params)
            if verdict:
                return verdict
        return passed(f"x restored bit for bit after every entry in all {len(cases)} cases "
                      "(values where x + eps - eps rounds differently among them)")

    return Plan("round:recorded_calls", {"cases": [c.data() for c in cases]}, judge)


_MISSED: tuple[tuple[str, Callable[[int, tuple[int, ...]], bool]], ...] = (
    ("one of them: a loop bound one short at one end",
     lambda reached, shape: reached == math.prod(shape) - 1),
    ("the last index of each axis: a range(n - 1) for every axis",
     lambda reached, shape: reached == math.prod(n - 1 for n in shape)),
    ("the entries past the first axis: a loop over x.shape[0] alone",
     lambda reached, shape: reached == (shape[0] if shape else 1)),
    ("the entries along the axes no loop walks: loops over fewer axes than x has",
     lambda reached, shape: reached in {math.prod(shape[:k]) for k in range(1, len(shape))}),
)
"""What a loop that calls f twice for only some entries missed, each with the count of entries
it reaches on an x of a shape: the first that fits every case with a wrong count is said."""


def _calls_hint(wrong: list[tuple[int, tuple[int, ...]]], params: dict[str, str]) -> str:
    """The hint for the counts of f's calls in the cases where they are wrong (calls, x's
    shape), the first of them shown: what the counts together say the loop did (one call per
    entry; a pair of calls for only some entries, and which ones), before the rule. One case
    cannot tell them apart (three calls for three entries: one each, or a pair each for one
    and a half?); every case has to fit."""
    # An empty x shows a loop's reach too (one over x.shape[0] calls f for an x of shape
    # (2, 0)), but the counts are said of an x with entries.
    calls, shape = next((w for w in wrong if math.prod(w[1])), wrong[0])
    size = math.prod(shape)
    if all(c in (math.prod(s), math.prod(s) + 1) and math.prod(s) > 1 for c, s in wrong):
        return params["one_sided_hint"]
    if all(c % 2 == 0 and (c < 2 * math.prod(s) or not math.prod(s)) for c, s in wrong):
        missed = next((what for what, fits in _MISSED
                       if all(fits(c // 2, s) for c, s in wrong)),
                      f"{size - calls // 2} of them")
        return params["pairs_hint"].format(reached=calls // 2, size=size, missed=missed)
    if calls < 2 * size:
        return params["few_hint"]
    if calls == 2 * size + 1:
        return params["extra_hint"]
    if calls in (3 * size, 3 * size + 1):
        return params["per_entry_hint"]
    return params["hint"]


def calls(ctx: Context, params: dict[str, str]) -> Plan:
    """f is called exactly 2 * x.size times (an empty x: never), and an empty x gives an empty
    gradient of its shape."""
    cases = call_cases(ctx.rng())

    def judge(rows: list[dict[str, Any]]) -> Verdict:
        counted = [(row["calls"], tuple(case["x"].shape))
                   for case, row in zip(cases, rows, strict=True) if not row["raised"]]
        for case, row in zip(cases, rows, strict=True):
            size = case.dim("entries")
            if row["raised"]:
                return raised_verdict(case.describe(), row["raised"],
                                      hint=params["empty_hint"] if size == 0 else None)
            if row["calls"] != 2 * size:
                wrong = [(c, s) for c, s in counted if c != 2 * math.prod(s)]  # this one first
                return failed(f"{case.describe()}: f was called {row['calls']} times; 2 * "
                              f"x.size = {2 * size}", hint=_calls_hint(wrong, params))
            if row["shape"] != list(case["x"].shape):
                return failed(f"{case.describe()}: the gradient has shape {tuple(row['shape'])}",
                              hint=params["empty_hint"])
        return passed(f"2 * x.size calls of f for x.size in "
                      f"{', '.join(str(c.dim('entries')) for c in cases)}")

    return Plan("round:count_calls", {"cases": [c.data() for c in cases]}, judge)


def result(ctx: Context, params: dict[str, str]) -> Plan:
    """g is new memory of x's shape, dtype and device."""
    cases = result_cases(ctx.rng())

    def judge(rows: list[dict[str, Any]]) -> Verdict:
        for case, row in zip(cases, rows, strict=False):
            if row["raised"]:
                return raised_verdict(case.describe(), row["raised"])
            shape, dtype, device = row["want"]
            if row["shared"]:
                return failed(f"{case.describe()}: the gradient is x itself or shares its "
                              "memory", hint=params["shared_hint"])
            if [row["shape"], row["dtype"], row["device"]] != row["want"]:
                return failed(f"{case.describe()}: the gradient is {row['dtype']} of shape "
                              f"{tuple(row['shape'])} on {row['device']}; x is {dtype} of shape "
                              f"{tuple(shape)} on {device}", hint=params["hint"])
        return passed("new memory, of x's shape, dtype and device, in float32 and float64")

    return Plan("round:result_memory", {"cases": [c.data() for c in cases]}, judge)


# --- Part 2 inputs, truth and mistakes ---------------------------------------------------------

PAIR_SHAPES: tuple[tuple[int, ...], ...] = ((), (1,), (5,), (3, 4), (2, 3, 4), (64,), (7, 1))


def pair(a: Any, b: Any, dtype: str = "float64", label: str = "") -> Case:
    a, b = np.asarray(a, dtype=dtype), np.asarray(b, dtype=dtype)
    return Case({"a": a, "b": b}, (("entries", a.size),), dtype, label=label)


def _noisy_pair(rng: np.random.Generator, shape: tuple[int, ...],
                dtype: str) -> Case:
    """a over six orders of magnitude; b = a with relative errors around 1e-3, one of 5% (up
    or down, so that dividing by |a| alone or by |b| alone is wrong in half the cases)."""
    a = rng.standard_normal(shape) * 10.0 ** rng.uniform(-3, 3, shape)
    noise = 1e-3 * rng.standard_normal(shape)
    if noise.size:
        noise.flat[rng.integers(noise.size)] = rng.choice([-0.05, 0.05])
    return pair(a, a * (1 + noise), dtype)


def _sign_flipped_pair(rng: np.random.Generator, shape: tuple[int, ...], dtype: str) -> Case:
    """A noisy pair with one entry of b of the other sign: the gradient a check exists to
    catch (relative error 2 there), which a comparison of magnitudes (|a| - |b|) calls right."""
    case = _noisy_pair(rng, shape, dtype)
    b = case["b"].copy()
    b.flat[rng.integers(b.size)] *= -1
    return pair(case["a"], b, dtype, label="one entry of b of the other sign")


def pairs(rng: np.random.Generator) -> list[Case]:
    """PAIR_SHAPES and a 2-D shape the run's seed draws (drawn_sizes), noisy, in each dtype;
    then pairs with a flipped sign."""
    shapes = [*PAIR_SHAPES, drawn_sizes(rng, 2)]
    return [_noisy_pair(rng, shape, dtype) for dtype in ("float64", "float32")
            for shape in shapes] + [_sign_flipped_pair(rng, shape, dtype)
                                    for dtype in ("float64", "float32")
                                    for shape in ((5,), (3, 4))]


def zero_pairs(rng: np.random.Generator) -> list[Case]:
    return [
        pair(np.zeros(4), np.zeros(4), label="a and b all zero"),
        pair([0.0, 1.0, 2.0], [0.0, 1.0, 2.5], label="one entry 0 in both"),
        pair([0.0, 1.0, 2.0], [0.0, 1.0, 2.5], "float32", label="one entry 0 in both, float32"),
        pair([0.0, 3.0], [1e-30, 3.0], label="1e-30 against 0 (100% apart)"),
        pair([1e-40, 3.0], [0.0, 3.0], "float32",
             label="float32's subnormal 1e-40 against 0 (below float32's tiny)"),
        pair(np.zeros(0), np.zeros(0), label="empty a and b"),
        pair(0.0, 0.0, label="0-d zeros"),
    ]


def one_pair(rng: np.random.Generator) -> Case:
    return _noisy_pair(rng, (6,), "float64")


def malformed_pairs(rng: np.random.Generator) -> list[Case]:
    shapes = [((3,), (4,)), ((2, 3), (3, 2)), ((3,), (3, 1)), ((), (1,)), ((2, 1), (2, 3))]
    return [Case({"a": np.ones(s), "b": np.ones(t)}, label=f"a of shape {s}, b of shape {t}")
            for s, t in shapes]


def relative_error_of(case: Case) -> float:
    """The reference's answer on the case's arrays as they are (the guard is their dtype's
    tiny)."""
    return _reference("part2").relative_error(case["a"], case["b"])


def _ab(case: Case) -> tuple[np.ndarray, np.ndarray]:
    return case["a"].astype(np.float64), case["b"].astype(np.float64)


def _guarded(numerator: np.ndarray, denominator: np.ndarray) -> np.ndarray:
    with np.errstate(all="ignore"):
        return numerator / np.maximum(denominator, np.finfo(np.float64).tiny)


def mean_error(case: Case) -> float:
    a, b = _ab(case)
    return float(np.mean(_guarded(np.abs(a - b), np.maximum(np.abs(a), np.abs(b)))))


def norm_ratio(case: Case) -> float:
    a, b = _ab(case)
    return float(np.linalg.norm(a - b) / max(np.linalg.norm(a), np.linalg.norm(b)))


def sum_denominator(case: Case) -> float:
    a, b = _ab(case)
    return float(np.max(_guarded(np.abs(a - b), np.abs(a) + np.abs(b))))


def over_b(case: Case) -> float:
    a, b = _ab(case)
    return float(np.max(_guarded(np.abs(a - b), np.abs(b))))


def absolute_error(case: Case) -> float:
    a, b = _ab(case)
    return float(np.max(np.abs(a - b)))


def global_scale(case: Case) -> float:
    a, b = _ab(case)
    return float(np.max(np.abs(a - b)) / max(np.max(np.abs(a)), np.max(np.abs(b))))


def nan_at_zeros(case: Case, actual: float) -> bool:
    """NaN where a finite answer exists: 0 / 0 at an entry where both are zero."""
    return math.isnan(actual) and not math.isnan(relative_error_of(case))


def guard_too_big(case: Case, actual: float) -> bool:
    """Far too small an error for values near zero: a guard that is not tiny."""
    return actual < 0.5 * relative_error_of(case)


def guard_below_the_dtypes_tiny(case: Case, actual: float) -> bool:
    """Far too large an error where a value lies below the inputs' dtype's tiny: a guard
    smaller than that tiny (float64's, for float32 input) divides a subnormal by itself."""
    tiny = np.finfo(case.dtype).tiny
    values = np.abs(np.concatenate([np.ravel(case["a"]), np.ravel(case["b"])]))
    below = bool(np.any((values > 0) & (values < tiny)))
    return below and actual > 2 * relative_error_of(case)


def symmetric_scale(ctx: Context, params: dict[str, Any]) -> Plan:
    """Swapping a and b, or scaling both, leaves the relative error as it was."""
    case = one_pair(ctx.rng())
    scales = [float(s) for s in params["scales"]]

    def judge(obs: dict[str, Any]) -> Verdict:
        if obs["raised"]:
            return raised_verdict(case.describe(), obs["raised"])
        values = obs["values"]
        base = values["(a, b)"]
        if not base > 0:  # a and b differ: an error that never shows is no measure of one
            return failed(f"{case.describe()}: relative_error(a, b) = {base:.6g} for a and b "
                          "that differ", hint=params["scale_hint"])
        for name, value in values.items():
            if not math.isclose(value, base, rel_tol=1e-9, abs_tol=0.0):
                hint = params["swap_hint"] if name == "(b, a)" else params["scale_hint"]
                return failed(f"{case.describe()}: relative_error(a, b) = {base:.6g} but "
                              f"relative_error{name} = {value:.6g}", hint=hint)
        return passed(f"the same {base:.6g} swapped and scaled by "
                      f"{', '.join(f'{s:g}' for s in scales)}")

    return Plan("round:transformed", {"case": case.data(), "scales": scales}, judge)


def nan_cases() -> list[Case]:
    return [pair([1.0, math.nan, 2.0], [1.0, 1.0, 2.0], label="a NaN in a"),
            pair([1.0, 1.0, 2.0], [1.0, 1.0, math.nan], label="a NaN in b")]


def nan_propagates(ctx: Context, params: dict[str, str]) -> Plan:
    cases = nan_cases()

    def judge(rows: list[dict[str, Any]]) -> Verdict:
        for row in rows:
            if row["raised"]:
                return raised_verdict(row["label"], row["raised"], hint=params["hint"])
            if not math.isnan(row["value"]):
                return failed(f"{row['label']}: returned {row['value']!r}, not NaN",
                              hint=params["hint"])
        return passed("a NaN in a or in b gives NaN")

    return Plan("round:each_number", {"cases": [c.data() for c in cases]}, judge)


def pair_in_each_dtype(rng: np.random.Generator) -> list[Case]:
    return [_noisy_pair(rng, (3,), dtype) for dtype in ("float64", "float32")]


# --- Part 3 inputs -----------------------------------------------------------------------------

CHECK_TOL = 1e-5
BUG = 1e-3
"""The relative size of the one wrong entry: far above the noise of a float64 estimate, far
below what a mean over hundreds of entries would show."""
KINK_SHIFT = 3e-7
"""Closer to a kink than eps = 1e-6: the central difference straddles it."""


def _with_wrong(case: Case, index: tuple[int, ...], size: float = BUG) -> Case:
    """The case with grad_f wrong by a relative `size` at one entry (by `size` itself where
    the gradient is 0; NaN there for a NaN `size`); which entry, and how, is the judge's
    alone."""
    true = float(GRADIENTS.gradient(case.extra["f"], point(case))[index])
    claimed = true * (1 + size) if true else size
    how = "NaN" if math.isnan(size) else "wrong"
    return Case(case.inputs, case.dims, case.dtype, label=f"{case.label}, grad_f {how} at "
                f"{index}", extra=case.extra, judge={
                    **case.judge, "index": list(index),
                    "wrong": [{"index": list(index), "value": claimed}]})


def claimed(cases: Case | list[Case]) -> Any:
    """Part 3's cases with the grad_f the candidate is handed, as values: the gradient at the
    point the candidate gets (in x's dtype, wrong where the judge made it wrong), computed
    here so that no gradient code runs beside candidate code."""
    def one(case: Case) -> Case:
        x = case["x"]
        view = case.extra.get("view")
        at = np.array(FUNCTIONS.apply_view(x, view) if view else x)
        grad = GRADIENTS.gradient(case.extra["f"], at, case.judge.get("wrong"))
        return Case(case.inputs, case.dims, case.dtype, case.label,
                    {**case.extra, "claimed": np.asarray(grad, dtype=x.dtype)}, case.judge)

    return [one(c) for c in cases] if isinstance(cases, list) else one(cases)


def _zero_rows(rng: np.random.Generator) -> Case:
    """A quadratic that ignores two entries of x: their gradients are 0 both ways."""
    spec, x = _made("quadratic", rng, (6,))
    for _ in range(100):
        spec["A"][[1, 4], :] = 0.0
        spec["A"][:, [1, 4]] = 0.0
        if _well_spread(spec, x):
            break
        spec, x = _made("quadratic", rng, (6,))
    return case_of(spec, x, tol=CHECK_TOL)


def correct_gradients(rng: np.random.Generator) -> list[Case]:
    shapes = (("quadratic", ()), ("quadratic", (3, 4)), ("product", (4,)),
              ("logsumexp", (2, 3)), ("cubic", (5,)), ("prefix", (3, 2, 2)),
              ("relu", (6,)), ("abs", (2, 3)))
    cases = [make(kind, rng, shape, spread=True, tol=CHECK_TOL) for kind, shape in shapes]
    empty = make("quadratic", rng, (0,), tol=CHECK_TOL)
    # And one gradient wrong by 100% at an entry: a check that says ok for it too says ok for
    # anything, and so tells nothing by saying it for the right ones.
    gross = _with_wrong(make("product", rng, (4,), spread=True, tol=CHECK_TOL), (2,), size=1.0)
    return [*cases, _zero_rows(rng), empty, gross]


def wrong_entries(rng: np.random.Generator) -> list[Case]:
    """One wrong entry: in a large x (where a mean would hide it), at the first and at the last
    entry of a smaller one, in a 3-d W and in a 1-d x; and a NaN entry past the first (a 0 / 0
    in grad_f), which every comparison answers False, so that a max or a `>` skips it."""
    return [_with_wrong(make("cubic", rng, shape, spread=True, tol=CHECK_TOL), index)
            for shape, index in (((12, 20), (5, 13)), ((4, 5), (0, 0)), ((4, 5), (3, 4)))] + [
        _with_wrong(make("prefix", rng, (5, 3, 3), spread=True, tol=CHECK_TOL), (2, 1, 0)),
        _with_wrong(make("logsumexp", rng, (8,), spread=True, tol=CHECK_TOL), (5,)),
        _with_wrong(make("quadratic", rng, (3, 4), spread=True, tol=CHECK_TOL), (1, 2),
                    size=math.nan),
    ]


def tolerance_cases(rng: np.random.Generator) -> list[Case]:
    """The same wrong entry (1e-3 off) under a loose and a tight tol; and a right gradient
    under a loose tol whose cubic has small entries, where a tol put in the step's place (the
    two are equal by default) gives central differences off by more than tol."""
    base = make("quadratic", rng, (5,), spread=True)
    wrong = [_with_wrong(Case(base.inputs, base.dims, base.dtype,
                              label=f"{base.label}, tol={tol:g}", extra={**base.extra, "tol": tol}),
                         (2,)) for tol in (1e-2, 1e-4)]
    x = np.array([0.1, -0.15, 0.8, -1.2]) * rng.choice([-1.0, 1.0], 4)
    right = case_of({"kind": "cubic", "c": _signed(rng, (4,), 0.5, 1.5)}, x, tol=LOOSE_TOL)
    default = _with_wrong(Case(base.inputs, base.dims, base.dtype,
                               label=f"{base.label}, tol left to its default",
                               extra={**base.extra, "tol": None}), (3,), BETWEEN_DEFAULTS)
    return [*wrong, right, default]


LOOSE_TOL = 0.3
"""A tolerance far from the step (1e-6): what either is used for shows."""
DEFAULT_TOL = 1e-6
"""check_gradient's tol when the caller passes none (the stub's signature says so)."""
BETWEEN_DEFAULTS = 4e-6
"""An entry's error that the default tol fails and a tenfold looser default would pass."""


def float32_cases(rng: np.random.Generator) -> list[Case]:
    """Below float64, whatever the dtype: a test for float32 alone (`== float32`) says nothing
    of a float16 x, where rounding is worse."""
    return [make("quadratic", rng, (4,), dtype, spread=True, tol=CHECK_TOL)
            for dtype in ("float32", "float16")]


def _kinked(rng: np.random.Generator, kind: str, at: list[float], size: int = 6,
            wrong: tuple[int, ...] | None = None, off: float = 0.5) -> Case:
    """relu or abs with the first len(at) entries at those points near 0, the rest smooth;
    grad_f wrong by `off` (relative, or absolute where the gradient is 0) at `wrong`."""
    spec, x = _made(kind, rng, (size,))
    x[:len(at)] = at
    case = case_of(spec, x, tol=CHECK_TOL)
    case = Case(case.inputs, case.dims, case.dtype, extra={**case.extra, "kinks": len(at)},
                label=f"{case.label}, x[:{len(at)}] = {at}")
    return _with_wrong(case, wrong, off) if wrong else case


def kink_cases(rng: np.random.Generator) -> list[Case]:
    return [_kinked(rng, "relu", [0.0, 0.0, 0.0]),
            _kinked(rng, "relu", [KINK_SHIFT, -KINK_SHIFT]),
            _kinked(rng, "abs", [KINK_SHIFT, 0.0, -KINK_SHIFT])]


def kink_and_bug_cases(rng: np.random.Generator) -> list[Case]:
    """A wrong smooth entry beside kinks, and a wrong entry at a kink itself: an analytic value
    of 3 or 4 where ReLU's one-sided slopes are 0 and 1 lies between neither, so it is a bug
    to report, not a kink to excuse (whatever the central difference says); nor is one just
    past w |x|'s slope |w|, by 20 tol: the slack at a kink is tol times the larger slope."""
    return [_kinked(rng, "relu", [0.0, KINK_SHIFT], wrong=(4,)),
            _kinked(rng, "abs", [-KINK_SHIFT], size=5, wrong=(1,)),
            _kinked(rng, "relu", [0.0, 0.0], wrong=(0,), off=3.0),
            _past_the_slope(rng)]


def _past_the_slope(rng: np.random.Generator) -> Case:
    """w |x| at its kink, the analytic value 20 tol past the slope |w| (autograd says 0 there,
    so the wrong value is absolute)."""
    case = _kinked(rng, "abs", [0.0], size=4)
    slope = abs(float(np.ravel(case.extra["f"]["w"])[0]))
    return _with_wrong(case, (0,), slope * (1 + 20 * CHECK_TOL))


def malformed_checks(rng: np.random.Generator) -> list[Case]:
    spec, x = _made("quadratic", rng, (3, 4))
    shapes = [[12], [4, 3], [3, 4, 1]]
    cases = [Case({"x": x}, label=f"grad_f returns shape {tuple(s)} for x of shape (3, 4)",
                  extra={"f": spec, "grad_shape": s, "tol": CHECK_TOL}) for s in shapes]
    line, dot = _made("quadratic", rng, (3,))
    cases.append(Case({"x": dot}, label="grad_f returns shape (3, 1) for x of shape (3,)",
                      extra={"f": line, "grad_shape": [3, 1], "tol": CHECK_TOL}))
    return claimed(cases + [Case({"x": x}, label=f"tol = {tol!r}", extra={"f": spec, "tol": tol})
                            for tol in (0.0, -1e-6, math.nan)])


def well_formed_check(rng: np.random.Generator) -> list[Case]:
    """Right gradients of the shape of x, and a positive tol: part3.validation's inputs that
    must not raise, of three shapes (a matrix, a vector, a single entry), so that refusing
    them all says the check refuses everything."""
    cases = []
    for shape in ((3, 4), (5,), (1, 1)):
        spec, x = _made("quadratic", rng, shape)
        cases.append(Case({"x": x}, label=f"a right grad_f for x of shape {shape}",
                          extra={"f": spec, "tol": CHECK_TOL}))
    return claimed(cases)


def quadratic_inputs(rng: np.random.Generator) -> Case:
    """A quadratic and a gradient wrong at every entry: a check looks at each entry again with
    one-sided differences, so every way of nudging x is taken, and each nudge must be undone
    bit for bit. x's first row is a hundredth of eps or so: (x + eps) - eps gives an entry of
    order 1 back exactly, nearly always, but one this small only about once in a hundred."""
    spec, x = _made("quadratic", rng, (2, 3))
    x[0] *= 1e-8
    return Case({"x": x, "A": spec["A"], "grad": GRADIENTS.gradient(spec, x) + 1.0},
                label="quadratic at x of shape (2, 3) (its first row near 0), float64, its "
                      "gradient off by 1")


# --- Part 3 judges -----------------------------------------------------------------------------


def _straddled(case: Case) -> set[tuple[int, ...]]:
    """The kink entries whose central difference disagrees with the analytic gradient (an
    entry exactly at the kink of abs agrees: both are 0)."""
    analytic, central = exact_gradient(case), central_at_eps(case)
    error = np.abs(analytic - central) / np.maximum(np.maximum(np.abs(analytic),
                                                               np.abs(central)), 1e-300)
    return {(i,) for i in range(case.extra["kinks"]) if error[i] > case.extra["tol"]}


def _said(row: dict[str, Any], pattern: re.Pattern[str]) -> bool:
    return any(w["user"] and pattern.search(w["message"]) for w in row["warnings"])


def _entry_error(case: Case) -> float:
    """The relative error at the wrong entry, as check_gradient should report it."""
    index = tuple(case.judge["index"])
    spec = case.extra["f"]
    claim = float(GRADIENTS.gradient(spec, point(case), case.judge["wrong"])[index])
    true = float(GRADIENTS.gradient(spec, point(case))[index])
    if math.isnan(claim):
        return math.nan
    return abs(claim - true) / max(abs(claim), abs(true))


def _index_matches(row: dict[str, Any], want: list[int]) -> bool:
    """worst_index names the entry: a tuple, or a plain int for a 1-d x."""
    return row["index"] == want and (not row["flat"] or len(want) == 1)


def _plan(cases: list[Case], judge_one: Callable[[Case, dict[str, Any]], Verdict | None],
          summary: str) -> Plan:
    """check_gradient on each case (handed the judge's claimed gradient); the first case
    judge_one finds fault with decides."""
    cases = claimed(cases)

    def judge(rows: list[dict[str, Any]]) -> Verdict:
        for case, row in zip(cases, rows, strict=True):
            if row["raised"]:
                return raised_verdict(case.describe(), row["raised"])
            verdict = judge_one(case, row)
            if verdict:
                return verdict
        return passed(summary.format(count=len(cases)))

    return Plan("round:checked", {"cases": [c.data() for c in cases]}, judge)


def _claims(row: dict[str, Any]) -> str:
    index = "None" if row["index"] is None else tuple(row["index"])
    return f"returned ok={row['ok']}, worst_index={index}, worst_error={row['error']:.3g}"


def correct(ctx: Context, params: dict[str, str]) -> Plan:
    """Right gradients pass: ok True, worst_error <= tol and a real index, and no warning
    about kinks or float64 (an empty x: (True, None, 0.0))."""

    def judge_one(case: Case, row: dict[str, Any]) -> Verdict | None:
        shape = case["x"].shape
        if "wrong" in case.judge:
            return failed(f"{case.describe()} by 100%: {_claims(row)}: a check that says ok "
                          "for this says ok for anything", hint=params["hint"]) \
                if row["ok"] else None
        where = f"{case.describe()}, grad_f right: {_claims(row)}"
        if math.isnan(row["error"]):
            return failed(where, hint=params["nan_hint"])
        if not row["ok"] or not row["error"] <= case.extra["tol"]:
            return failed(where, hint=params["hint"])
        if math.prod(shape) == 0:
            if row["index"] is not None or row["error"] != 0.0:
                return failed(where + " for an empty x", hint=params["empty_hint"])
            return None
        index = row["index"]
        if index is None or len(index) != len(shape) and not row["flat"] or any(
                not 0 <= i < n for i, n in zip(index, shape, strict=False)):
            return failed(where + f": not an index of x of shape {shape}",
                          hint=params["index_hint"])
        if _said(row, KINK_WORDS) or _said(row, re.compile("float64")):
            message = next(w["message"] for w in row["warnings"] if w["user"])
            return failed(f"{case.describe()}, a smooth f in float64: warned {message!r}",
                          hint=params["false_alarm_hint"])
        return None

    return _plan(correct_gradients(ctx.rng()), judge_one,
                 "ok, within tol, for the right gradients (zero entries and an empty x too), "
                 "and not ok for one 100% off ({count} cases)")


def wrong_entry(ctx: Context, params: dict[str, str]) -> Plan:
    """One entry wrong by 0.1% in hundreds: not ok, that entry named, its error reported."""

    def judge_one(case: Case, row: dict[str, Any]) -> Verdict | None:
        want = case.judge["index"]
        expected = _entry_error(case)
        nan = math.isnan(expected)
        where = f"{case.describe()}{'' if nan else f' by {BUG:g}'}: {_claims(row)}"
        if row["ok"]:
            return failed(where, hint=params["nan_missed_hint" if nan else "missed_hint"])
        if not _index_matches(row, want):
            hint = params["flat_hint"] if row["flat"] else params["index_hint"]
            return failed(where + f"; the wrong entry is {tuple(want)}", hint=hint)
        error = row["error"]
        # A NaN entry's error may be reported as NaN or as the infinity it was ranked as.
        right = (math.isnan(error) or error == math.inf) if nan else \
            math.isclose(error, expected, rel_tol=1e-2)
        if not right:
            return failed(where + f"; its relative error is {expected:.3g}",
                          hint=params["error_hint"])
        return None

    return _plan(wrong_entries(ctx.rng()), judge_one,
                 "the one wrong entry found and named in {count} cases (up to 240 entries)")


def tolerance(ctx: Context, params: dict[str, str]) -> Plan:
    def judge_one(case: Case, row: dict[str, Any]) -> Verdict | None:
        tol = DEFAULT_TOL if case.extra["tol"] is None else case.extra["tol"]
        if case.extra["tol"] is None and row["ok"] != (_entry_error(case) <= tol):
            return failed(f"{case.describe()} by {BETWEEN_DEFAULTS:g}: {_claims(row)}",
                          hint=params["default_hint"])
        if "wrong" not in case.judge:
            if not row["ok"]:
                return failed(f"{case.describe()}, every entry of grad_f right: "
                              f"{_claims(row)}", hint=params["step_hint"])
            return None
        if row["ok"] != (_entry_error(case) <= tol):
            return failed(f"{case.describe()} by {BUG:g}: {_claims(row)}", hint=params["hint"])
        return None

    return _plan(tolerance_cases(ctx.rng()), judge_one,
                 "an error of 1e-3 passes tol = 1e-2 and fails tol = 1e-4, and a right "
                 f"gradient passes tol = {LOOSE_TOL:g}")


def float32_warning(ctx: Context, params: dict[str, str]) -> Plan:
    def judge_one(case: Case, row: dict[str, Any]) -> Verdict | None:
        if _said(row, re.compile("float64")):
            return None
        others = [f"{w['category']}: {w['message']!r}" for w in row["warnings"]]
        said = f"; it warned {'; '.join(others)}" if others else "; no warning"
        return failed(f"{case.describe()}: no UserWarning naming float64{said}",
                      hint=params["hint"])

    return _plan(float32_cases(ctx.rng()), judge_one, "a UserWarning names float64")


def kinks(ctx: Context, params: dict[str, str]) -> Plan:
    """Disagreement only at kinks: ok True, a warning that says so, kink entries not reported
    as the worst."""

    def judge_one(case: Case, row: dict[str, Any]) -> Verdict | None:
        where = f"{case.describe()}, grad_f right where f is differentiable: {_claims(row)}"
        if not row["ok"]:
            return failed(where, hint=params["hint"])
        if not _said(row, KINK_WORDS):
            return failed(where + ", but no UserWarning mentions a kink",
                          hint=params["warning_hint"])
        if row["index"] is not None and tuple(row["index"]) in _straddled(case):
            return failed(where + ": worst_index is a kink entry, which is not compared",
                          hint=params["index_hint"])
        return None

    return _plan(kink_cases(ctx.rng()), judge_one,
                 "kinks excused with a warning in {count} cases (at 0 and within eps of it)")


def kink_and_bug(ctx: Context, params: dict[str, str]) -> Plan:
    def judge_one(case: Case, row: dict[str, Any]) -> Verdict | None:
        want = case.judge["index"]
        if row["ok"] or not _index_matches(row, want):
            where = "a kink whose slopes it lies outside" \
                if want[0] < case.extra["kinks"] else "a smooth entry"
            return failed(f"{case.describe()} ({where}): {_claims(row)}", hint=params["hint"])
        return None

    return _plan(kink_and_bug_cases(ctx.rng()), judge_one,
                 "a wrong smooth entry still reported beside kinks ({count} cases)")


def returns(ctx: Context, params: dict[str, str]) -> Plan:
    """(ok, worst_index, worst_error) as a bool, a tuple of ints and a float."""
    rng = ctx.rng()
    cases = [make("quadratic", rng, (3, 4), spread=True, tol=CHECK_TOL),
             _with_wrong(make("quadratic", rng, (2, 3), spread=True, tol=CHECK_TOL), (1, 2)),
             make("cubic", rng, (), tol=CHECK_TOL)]

    def judge_one(case: Case, row: dict[str, Any]) -> Verdict | None:
        bad = [name for name, good in row["types"].items() if not good]
        if bad:
            names = dict(zip(("ok", "index", "error"), row["type_names"], strict=True))
            return failed(f"{case.describe()}: " + ", ".join(
                f"{'worst_' if n != 'ok' else ''}{n} is a {names[n]}" for n in bad),
                hint=params["hint"])
        if case["x"].ndim == 0 and row["index"] != []:
            return failed(f"{case.describe()}: worst_index {row['index']} for a 0-d x",
                          hint=params["index_hint"])
        return None

    return _plan(cases, judge_one, "a bool, a tuple index (() for a 0-d x) and a float")


# --- the interviewer's follow-ups --------------------------------------------------------------

FOLLOWUP_STEPS = (1e-1, 1e-2, 1e-3, 1e-4, 1e-5, 1e-6, 1e-7, 1e-8, 1e-9, 1e-10, 1e-11)
FOLLOWUP_SEED = 0
"""The follow-ups use one fixed point, so the reading knows the truth it is compared with."""


def followup_part1_args(seed: int) -> dict[str, Any]:
    spec, x = _made("logsumexp", np.random.default_rng(FOLLOWUP_SEED), (4,))
    return {"spec": spec, "x": x, "steps": list(FOLLOWUP_STEPS)}


def _curve(errors: list[float]) -> str:
    return ", ".join(f"{eps:.0e}: {error:.1e}" for eps, error in zip(FOLLOWUP_STEPS, errors,
                                                                     strict=True))


def interpret_part1(data: dict[str, Any]) -> dict[str, Any]:
    """The error of the candidate's estimate against the exact gradient at each step, in
    float64 and float32: where each curve bottoms out, and how fast it falls at large steps."""
    from grader.round_api.judge import unavailable

    if data["raised"]:
        return unavailable(data["raised"]["message"])
    args = followup_part1_args(FOLLOWUP_SEED)
    true = GRADIENTS.gradient(args["spec"], args["x"])
    errors = {dtype: [float(np.max(np.abs(g - true)) / np.max(np.abs(true))) for g in found]
              for dtype, found in data["estimates"].items()}
    best = {dtype: int(np.argmin(e)) for dtype, e in errors.items()}
    default = FOLLOWUP_STEPS.index(DEFAULT_EPS)
    e64 = errors["float64"]
    return {"status": "measured", "errors": errors, "values": {
        "curve64": _curve(e64), "curve32": _curve(errors["float32"]),
        "best64": f"{FOLLOWUP_STEPS[best['float64']]:.0e}",
        "best32": f"{FOLLOWUP_STEPS[best['float32']]:.0e}",
        "low64": f"{e64[best['float64']]:.1e}",
        "low32": f"{errors['float32'][best['float32']]:.1e}",
        "default32": f"{errors['float32'][default]:.1e}",
        "drop": f"{e64[0] / e64[1]:.0f}" if e64[1] else "inf",
    }}


def followup_part2_args(seed: int) -> dict[str, Any]:
    rng = np.random.default_rng(FOLLOWUP_SEED)
    a = rng.standard_normal(10_000)
    b = a.copy()
    b[1234] *= 1.5
    small = rng.standard_normal(4)
    return {"pairs": {
        "one_bad": [a, b], "zeros": [np.zeros(3), np.zeros(3)], "ab": [small, small * 1.1],
        "ba": [small * 1.1, small], "scaled": [small * 1e-20, small * 1.1e-20],
    }}


def interpret_part2(data: dict[str, Any]) -> dict[str, Any]:
    """Each of the candidate's answers, as a number to quote (or 'an error')."""
    return {"status": "measured", "values": {
        name: "an error" if value is None else f"{value:.4g}"
        for name, value in data["values"].items()}}


def followup_part3_args(seed: int) -> dict[str, Any]:
    rng = np.random.default_rng(FOLLOWUP_SEED)
    at_kink = _kinked(rng, "relu", [0.0, KINK_SHIFT], size=4)
    single = make("quadratic", rng, (4,), "float32", spread=True, tol=CHECK_TOL)
    return {"cases": [case.data() for case in claimed([at_kink, single])]}


def interpret_part3(data: dict[str, Any]) -> dict[str, Any]:
    """What the candidate's check said at a kink and in float32, in words."""

    def told(row: dict[str, Any]) -> str:
        if row["raised"]:
            return f"raised {format_raised(row['raised'])}"
        said = "; ".join(repr(w["message"]) for w in row["warnings"]) or "no warning"
        return f"{_claims(row)}, warning {said}"

    kink, single = data["rows"]
    return {"status": "measured", "values": {"kink": told(kink), "single": told(single)}}
