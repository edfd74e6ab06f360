"""Linear recurrence, judge side: the truth, the inputs, the known mistakes, the special judges.

checks.toml names everything here that a check uses. Nothing in this module runs beside
candidate code: it runs in the judge, where it computes what the answers should be. The
forward's truth is the numpy reference's loop in float64; the backward's is torch autograd
through that same loop (float64), so neither leans on the hand-written backward.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
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
    load_reference_part,
    matches,
    mismatched_inputs,
    passed,
    raised_verdict,
    tree_matches,
)

ROUND = Round.load(Path(__file__).resolve().parent)

# --- the truth ------------------------------------------------------------------------------------


@cache
def _reference(part_id: str) -> Any:
    return load_reference_part(ROUND, ROUND.part(part_id), "numpy")


def _f64(case: Case, *names: str) -> list[np.ndarray]:
    return [np.asarray(case[n], dtype=np.float64) for n in names]


def recurrence(a: np.ndarray, b: np.ndarray, h0: np.ndarray) -> np.ndarray:
    """h in float64, by the reference's sequential loop."""
    return _reference("part1").linear_recurrence(*(np.asarray(x, dtype=np.float64)
                                                   for x in (a, b, h0)))


def forward_of(case: Case) -> np.ndarray:
    return recurrence(case["a"], case["b"], case["h0"])


def gradients(a: np.ndarray, b: np.ndarray, h0: np.ndarray,
              dh: np.ndarray) -> dict[str, np.ndarray]:
    """da, db, dh0 of sum(h * dh), by torch autograd through the sequential loop (float64)."""
    import torch

    leaves = [torch.tensor(np.asarray(x, dtype=np.float64), requires_grad=True)
              for x in (a, b, h0)]
    ta, tb, th0 = leaves
    state, states = th0, []
    for t in range(ta.shape[0]):
        state = ta[t] * state + tb[t]
        states.append(state)
    if states:
        torch.autograd.backward(states, list(torch.from_numpy(np.asarray(dh, dtype=np.float64))))
    return {name: (x.grad.numpy().copy() if x.grad is not None else np.zeros(x.shape))
            for name, x in zip(("da", "db", "dh0"), leaves, strict=True)}


def gradients_of(case: Case) -> dict[str, np.ndarray]:
    return gradients(case["a"], case["b"], case["h0"], case["dh"])


def composed_of(case: Case) -> dict[str, np.ndarray]:
    """combine((a1, b1), (a2, b2)): the map a1, b1 first, then a2, b2."""
    a1, b1, a2, b2 = _f64(case, "a1", "b1", "a2", "b2")
    return {"a": a1 * a2, "b": a2 * b1 + b2}


def loss(inputs: dict[str, np.ndarray]) -> float:
    """The scalar whose gradient the backward computes: sum(h * dh)."""
    return float(np.sum(recurrence(inputs["a"], inputs["b"], inputs["h0"]) * inputs["dh"]))


# --- inputs -----------------------------------------------------------------------------------
#
# |a| is drawn from [0.5, 0.98] with a random sign: h stays of order 1 at any T, every step's
# coefficient matters, and over the longest case the product of a's falls below float32's
# smallest number (what the closed form through cumprod cannot survive).

SHAPES: tuple[tuple[int, int], ...] = (
    (1, 1), (1, 3), (2, 2), (3, 3), (4, 1), (5, 3), (7, 2), (8, 4), (9, 2), (16, 3),
    (17, 1), (31, 2), (33, 3), (64, 2), (100, 3),
)
LONG = (300, 2)
DEPTH_SIZES = ((16, 2), (128, 2))
WORK_SIZES = ((16, 2), (2048, 2))


def draw_a(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    return rng.choice([-1.0, 1.0], size=shape) * rng.uniform(0.5, 0.98, size=shape)


def make_case(rng: np.random.Generator, t: int, d: int, dtype: str = "float64",
              a: np.ndarray | None = None) -> Case:
    """A case of T steps over D channels: `a` drawn (draw_a) unless given."""
    a = draw_a(rng, (t, d)) if a is None else a
    b = rng.standard_normal((t, d))
    h0 = rng.standard_normal(d)
    dh = rng.standard_normal((t, d))
    h = recurrence(a, b, h0)
    inputs = {"a": a, "b": b, "h0": h0, "h": h, "dh": dh}
    return Case({k: v.astype(dtype) for k, v in inputs.items()}, (("T", t), ("D", d)), dtype)


def many(rng: np.random.Generator) -> list[Case]:
    """Every shape in float64, those with T > 1 again in float32, one long sequence in each
    dtype, and a float64 one whose T (9 to 200) and D (1 to 6) the run's seed draws: a scan
    cannot be right at the fixed lengths alone."""
    cases = [make_case(rng, t, d) for t, d in SHAPES]
    cases += [make_case(rng, t, d, "float32") for t, d in SHAPES if t > 1]
    (t,), (d,) = drawn_sizes(rng, 1, (9, 200)), drawn_sizes(rng, 1, (1, 6))
    return cases + [make_case(rng, *LONG), make_case(rng, *LONG, dtype="float32"),
                    make_case(rng, t, d), *gated(rng)]


GATED = (12, 3)
DECAYING = (2000, 2)


def gated(rng: np.random.Generator) -> list[Case]:
    """The contract's whole range of a, in float64: gates shut (a = 0: the state resets) and
    wide open (a = 1 and -1) at steps the seed draws, and a long sequence of strong decay (|a|
    from 0.3 to 0.6, products below float64's smallest number within 2000 steps). A closed
    form that divides by the running product of a (h = A * cumsum(b / A)) meets a zero or an
    underflow in these, as the recurrence itself never does."""
    t, d = GATED
    a = draw_a(rng, (t, d))
    for channel in range(d):
        shut, open_ = rng.choice(np.arange(1, t), size=2, replace=False)
        a[shut, channel], a[open_, channel] = 0.0, rng.choice([-1.0, 1.0])
    t, d = DECAYING
    decay = rng.choice([-1.0, 1.0], size=(t, d)) * rng.uniform(0.3, 0.6, size=(t, d))
    return [replace(make_case(rng, *GATED, a=a), label=f"T={GATED[0]}, D={GATED[1]}, float64, "
                                                       "gates shut (a = 0) and open (|a| = 1)"),
            make_case(rng, *DECAYING, a=decay)]


def empty(rng: np.random.Generator) -> list[Case]:
    return [make_case(rng, 0, 3), make_case(rng, 0, 1, "float32")]


def sizes(*pairs: tuple[int, int]) -> Callable[[np.random.Generator], list[Case]]:
    """An input maker: one float64 case per (T, D)."""
    return lambda rng: [make_case(rng, t, d) for t, d in pairs]


def small(t: int, d: int) -> Callable[[np.random.Generator], Case]:
    return lambda rng: make_case(rng, t, d)


one_6x3 = small(6, 3)
one_5x2 = small(5, 2)
tiny_and_7 = sizes((0, 3), (1, 3), (2, 2), (7, 3))
depth_sizes = sizes(*DEPTH_SIZES)
work_sizes = sizes(*WORK_SIZES)


def both_dtypes(rng: np.random.Generator) -> list[Case]:
    return [make_case(rng, 5, 3, dtype) for dtype in ("float32", "float64")]


def combine_cases(rng: np.random.Generator) -> list[Case]:
    """Pairs of maps of several shapes (one channel, a vector, a (T, D) block), both dtypes."""
    cases = []
    for shape, dtype in (((1,), "float64"), ((3,), "float64"), ((4, 2), "float64"),
                         ((3,), "float32"), ((5, 3), "float32")):
        maps = {"a1": draw_a(rng, shape), "b1": rng.standard_normal(shape),
                "a2": draw_a(rng, shape), "b2": rng.standard_normal(shape)}
        cases.append(Case({k: v.astype(dtype) for k, v in maps.items()},
                          tuple(zip(("T", "D")[2 - len(shape):], shape, strict=True)), dtype,
                          label=f"maps of shape {shape}, {dtype}"))
    return cases


def _malformed(rows: list[tuple[str, tuple[int, ...], tuple[int, ...], tuple[int, ...]]]
               ) -> list[Case]:
    """(description, a's shape, the (T, D) argument's shape, h0's shape): b in the forward,
    h and dh in the backward."""
    return [Case({"a": np.full(a, 0.5), "b": np.ones(other), "h0": np.ones(h0),
                  "h": np.ones(other), "dh": np.ones(other)}, label=label)
            for label, a, other, h0 in rows]


BAD_SHAPES: list[tuple[str, tuple[int, ...], tuple[int, ...], tuple[int, ...]]] = [
    ("a has ndim 1", (5,), (5,), (5,)),
    ("a has ndim 3", (5, 3, 1), (5, 3, 1), (3,)),
    ("the (T, D) argument has another T", (5, 3), (6, 3), (3,)),
    ("the (T, D) argument has another D", (5, 3), (5, 2), (3,)),
    ("the (T, D) argument is a's transpose", (5, 3), (3, 5), (3,)),
    ("h0 has another D", (5, 3), (5, 3), (2,)),
    ("h0 has shape (1, D)", (5, 3), (5, 3), (1, 3)),
    ("h0 has shape (T, D)", (5, 3), (5, 3), (5, 3)),
    ("T = 0 and h0 has another D", (0, 3), (0, 3), (2,)),
    ("T = 0 and the (T, D) argument has another D", (0, 3), (0, 2), (3,)),
    ("T = 1 and h0 is a scalar", (1, 3), (1, 3), ()),
]


def malformed(rng: np.random.Generator) -> list[Case]:
    """BAD_SHAPES, then every size of a (T, D), the (T, D) argument and h0 (D,) broken alone."""
    listed = _malformed(BAD_SHAPES)
    other = "the (T, D) argument"
    good = {"a": np.ones((5, 3)), other: np.ones((5, 3)), "h0": np.ones(3)}
    made = []
    for label, changes in mismatched_inputs(good, {"a": "TD", other: "TD", "h0": "D"}, listed=[
            {"a": c["a"], other: c["b"], "h0": c["h0"]} for c in listed]):
        shapes = {name: np.shape(value) for name, value in {**good, **changes}.items()}
        made.append((label, shapes["a"], shapes[other], shapes["h0"]))
    return listed + _malformed(made)


# --- the known mistakes -------------------------------------------------------------------------


def _run(a: np.ndarray, b: np.ndarray, h0: np.ndarray,
         step: Callable[[np.ndarray, np.ndarray, np.ndarray], np.ndarray]) -> np.ndarray:
    h = np.empty_like(b)
    state = h0
    for t in range(a.shape[0]):
        state = step(a[t], state, b[t])
        h[t] = state
    return h


def h0_forgotten(case: Case) -> np.ndarray:
    a, b, h0 = _f64(case, "a", "b", "h0")
    return recurrence(a, b, np.zeros_like(h0))


def exclusive(case: Case) -> np.ndarray:
    """h shifted one step late: row t holds the state before step t (h0 at t = 0)."""
    a, b, h0 = _f64(case, "a", "b", "h0")
    h = recurrence(a, b, h0)
    return np.concatenate([h0[None], h[:-1]]) if len(h) else h


def bias_inside(case: Case) -> np.ndarray:
    a, b, h0 = _f64(case, "a", "b", "h0")
    return _run(a, b, h0, lambda at, state, bt: at * (state + bt))


def composed_backwards(case: Case) -> np.ndarray:
    """What a scan whose combine applies the right map first computes: h[t] is h0 sent
    through the maps of steps t, t-1, ..., 0 (the order reversed), whatever the tree."""
    a, b, h0 = _f64(case, "a", "b", "h0")
    h = np.empty_like(b)
    total_a, total_b = np.ones_like(h0), np.zeros_like(h0)
    for t in range(a.shape[0]):
        total_b = total_a * b[t] + total_b
        total_a = total_a * a[t]
        h[t] = total_a * h0 + total_b
    return h


def _start_from_first_row(case: Case, actual: Any) -> np.ndarray | None:
    """The h0 that the first row of `actual` implies (where every a[0] is far from 0)."""
    a, b = _f64(case, "a", "b")
    actual = np.asarray(actual, dtype=np.float64)
    if a.shape[0] == 0 or actual.shape != a.shape or np.abs(a[0]).min() < 0.1:
        return None
    return (actual[0] - b[0]) / a[0]


def started_elsewhere(case: Case, actual: Any) -> bool:
    """The recurrence, run right, from a start other than h0 (seeded or padded with something
    other than the identity (1, 0))."""
    start = _start_from_first_row(case, actual)
    if start is None or matches(start, np.asarray(case["h0"], np.float64), case.dtype):
        return False
    return matches(np.asarray(actual), recurrence(case["a"], case["b"], start), case.dtype)


def _power_of_two(n: int) -> bool:
    return n > 0 and n & (n - 1) == 0


def padded_wrong_identity(case: Case, actual: Any) -> bool:
    """Right at lengths that are powers of two; elsewhere the recurrence from another start:
    the padding in front was not the identity."""
    return not _power_of_two(case.dim("T")) and (
        started_elsewhere(case, actual) or tree_matches(actual, h0_forgotten(case), case.dtype))


def tail_dropped(case: Case, actual: Any) -> bool:
    """Right up to the largest power of two below T, wrong after it."""
    t = case.dim("T")
    if t < 3 or _power_of_two(t) or np.shape(actual) != (t, case.dim("D")):
        return False
    kept = 1 << (t.bit_length() - 1)
    truth = forward_of(case)
    value = np.asarray(actual, dtype=np.float64)
    return bool(np.isfinite(value).all()) and matches(value[:kept], truth[:kept], case.dtype) \
        and not matches(value[kept:], truth[kept:], case.dtype)


def closed_form(case: Case, actual: Any) -> bool:
    """h = A * (h0 + cumsum(b / A)) with A the running product of a: it divides by a product
    that is 0 where a gate shuts and underflows on a long sequence (to 0 in float32 first),
    giving inf or NaN. The result's non-finite entries are where the closed form's, computed
    in float64 or in the case's dtype, are; or, on a long sequence, anywhere."""
    value = np.asarray(actual, dtype=np.float64)
    if value.shape != case["a"].shape:
        return False
    broken = ~np.isfinite(value)
    if not broken.any():
        return False
    if case.dim("T") >= LONG[0]:
        return True
    for dtype in {"float64", case.dtype}:
        a, b, h0 = (np.asarray(case[name], dtype=dtype) for name in ("a", "b", "h0"))
        with np.errstate(all="ignore"):
            products = np.cumprod(a, axis=0)
            closed = products * (h0 + np.cumsum(b / products, axis=0))
        if np.array_equal(~np.isfinite(closed), broken):
            return True
    return False


def _blelloch(case: Case, *, stale: bool = False) -> np.ndarray:
    """The reference scan with the down-sweep reading the left child after overwriting it."""
    a, b, h0 = _f64(case, "a", "b", "h0")
    t = a.shape[0]
    if t == 0:
        return b.copy()
    size = 1 << (t - 1).bit_length()
    A, B = np.ones((size, a.shape[1])), np.zeros((size, a.shape[1]))
    A[:t], B[:t] = a, b
    step = 1
    while step < size:
        left, right = slice(step - 1, size, 2 * step), slice(2 * step - 1, size, 2 * step)
        A[right], B[right] = A[left] * A[right], A[right] * B[left] + B[right]
        step *= 2
    A[size - 1], B[size - 1] = 1.0, 0.0
    step = size // 2
    while step >= 1:
        left, right = slice(step - 1, size, 2 * step), slice(2 * step - 1, size, 2 * step)
        saved_a, saved_b = A[left].copy(), B[left].copy()
        A[left], B[left] = A[right], B[right]
        if stale:
            saved_a, saved_b = A[left], B[left]
        A[right], B[right] = A[right] * saved_a, saved_a * B[right] + saved_b
        step //= 2
    pa, pb = A[:t] * a, a * B[:t] + b
    return pa * h0 + pb


def stale_down_sweep(case: Case) -> np.ndarray:
    return _blelloch(case, stale=True)


def combine_swapped(case: Case) -> dict[str, np.ndarray]:
    a1, b1, a2, b2 = _f64(case, "a1", "b1", "a2", "b2")
    return {"a": a1 * a2, "b": a1 * b2 + b1}


def combine_unscaled(case: Case) -> dict[str, np.ndarray]:
    a1, b1, a2, b2 = _f64(case, "a1", "b1", "a2", "b2")
    return {"a": a1 * a2, "b": b1 + b2}


def combine_own_scale(case: Case) -> dict[str, np.ndarray]:
    a1, b1, a2, b2 = _f64(case, "a1", "b1", "a2", "b2")
    return {"a": a1 * a2, "b": a1 * b1 + b2}


def _backward(case: Case, *, direction: str = "reverse", shift: bool = True,
              before: str = "h[t-1]", dh0: str = "a[0] * g[0]",
              flip_back: bool = True) -> dict[str, np.ndarray]:
    """The backward with one knob turned to a known slip: the adjoint's direction, its
    coefficient, the state da pairs with, dh0, and whether the reversed scan is put back."""
    a, h0, h, dh = _f64(case, "a", "h0", "h", "dh")
    if a.shape[0] == 0:
        return {"da": np.zeros_like(a), "db": np.zeros_like(a), "dh0": np.zeros_like(h0)}
    h = recurrence(a, case["b"], h0)
    coefficient = np.zeros_like(a)
    coefficient[:-1] = a[1:]
    if not shift:
        coefficient = a
    if direction == "reverse":
        g = recurrence(coefficient[::-1], dh[::-1], np.zeros_like(h0))
        g = g[::-1] if flip_back else g
    elif direction == "forward":
        g = recurrence(a, dh, np.zeros_like(h0))
    else:
        g = dh.copy()
    previous = {"h[t-1]": np.concatenate([h0[None], h[:-1]]), "h[t]": h,
                "h[-1] at 0": np.concatenate([h[-1:], h[:-1]])}[before]
    first = {"a[0] * g[0]": a[0] * g[0], "g[0]": g[0], "zero": np.zeros_like(h0)}[dh0]
    return {"da": g * previous, "db": g, "dh0": first}


def scanned_forward(case: Case) -> dict[str, np.ndarray]:
    return _backward(case, direction="forward")


def unshifted_coefficient(case: Case) -> dict[str, np.ndarray]:
    return _backward(case, shift=False)


def da_uses_h(case: Case) -> dict[str, np.ndarray]:
    return _backward(case, before="h[t]")


def h_before_wraps(case: Case) -> dict[str, np.ndarray]:
    return _backward(case, before="h[-1] at 0")


def dh0_missing_a(case: Case) -> dict[str, np.ndarray]:
    return _backward(case, dh0="g[0]")


def dh0_forgotten(case: Case) -> dict[str, np.ndarray]:
    return _backward(case, dh0="zero")


def no_adjoint_scan(case: Case) -> dict[str, np.ndarray]:
    return _backward(case, direction="none")


def not_flipped_back(case: Case) -> dict[str, np.ndarray]:
    return _backward(case, flip_back=False)


# --- Part 4: the candidate's autograd.Function ---------------------------------------------------



SAVED_LIMIT = 3
"""How many (T, D) arrays' worth of numbers a Function may save: the reference saves two (a and
h) and h0; every level of the scan kept costs about one more."""


def saves_little(ctx: Context, params: dict[str, str]) -> Plan:
    """What the Function saved for backward (saved-tensor hooks see save_for_backward): O(T*D)
    numbers, not the scan's levels; tensors kept as ctx attributes are named."""
    case = make_case(ctx.rng(), 64, 2)
    t, d = case.dim("T"), case.dim("D")
    limit = SAVED_LIMIT * t * d + 2 * d

    def judge(obs: dict[str, Any]) -> Verdict:
        if obs["raised"]:
            return raised_verdict(case.describe(), obs["raised"])
        summary = (f"{case.describe()}: ctx.save_for_backward saved {len(obs['shapes'])} "
                   f"tensor(s), {obs['numbers']} numbers (a (T, D) array is {t * d})")
        if obs["stashed"]:
            return failed(f"{summary}; tensors kept as ctx attributes instead: "
                          f"{', '.join('ctx.' + n for n in obs['stashed'])}",
                          hint=params["stashed_hint"])
        if obs["numbers"] > limit:
            return failed(f"{summary}: more than {SAVED_LIMIT} arrays' worth",
                          hint=params["too_much_hint"])
        if not obs["shapes"]:
            return failed(summary, hint=params["nothing_hint"])
        return passed(summary)

    return Plan("round:saved_tensors", {"case": case.data()}, judge)




# --- the interviewer's follow-ups ----------------------------------------------------------------

FOLLOWUP_T = 300
FOLLOWUP_MAGNITUDE = 0.5
WORK_T = (16, 256)
DEPTH_T = (16, 128)


def followup_part1_args(seed: int) -> dict[str, Any]:
    """A long sequence with |a| = FOLLOWUP_MAGNITUDE and b = 0, h0 = 1: h[t] is the running
    product of a, in both dtypes."""
    a = np.full((FOLLOWUP_T, 1), FOLLOWUP_MAGNITUDE)
    return {"a": a, "b": np.zeros_like(a), "h0": np.ones(1)}


def interpret_part1(data: dict[str, Any]) -> dict[str, Any]:
    from grader.round_api.judge import unavailable

    if data["raised"]:
        return unavailable(data["raised"]["message"])
    rows = {dtype: np.abs(np.asarray(h, dtype=np.float64)[:, 0]) for dtype, h in data["h"].items()}
    zero32 = np.flatnonzero(rows["float32"] == 0)
    return {"status": "measured", "values": {
        "t": FOLLOWUP_T, "a": FOLLOWUP_MAGNITUDE,
        "last64": f"{rows['float64'][-1]:.3g}", "last32": f"{rows['float32'][-1]:.3g}",
        "step50": f"{rows['float64'][49]:.3g}",
        "zero32": str(int(zero32[0])) if zero32.size else "never",
    }}


def followup_part2_args(seed: int) -> dict[str, Any]:
    rng = np.random.default_rng(0)
    return {"work": [make_case(rng, t, 1).data() for t in WORK_T],
            "depth": [make_case(rng, t, 1).data() for t in DEPTH_T]}


def hillis_steele_products(t: int) -> int:
    """The multiplications of a Hillis-Steele scan of T affine maps (one channel): two per
    combine, T - s combines at the level of offset s, then applying the maps to h0."""
    products, step = 0, 1
    while step < t:
        products += 2 * (t - step)
        step *= 2
    return products + t


def interpret_part2(data: dict[str, Any]) -> dict[str, Any]:
    from grader.round_api.judge import unavailable

    if data["raised"]:
        return unavailable(data["raised"]["message"])
    small, large = data["products"]
    low, high = data["depths"]
    return {"status": "measured", "values": {
        "t1": WORK_T[0], "t2": WORK_T[1], "yours1": small, "yours2": large,
        "growth": f"{large / max(small, 1):.1f}", "ratio": WORK_T[1] // WORK_T[0],
        "hs1": hillis_steele_products(WORK_T[0]), "hs2": hillis_steele_products(WORK_T[1]),
        "hs_growth": f"{hillis_steele_products(WORK_T[1]) / hillis_steele_products(WORK_T[0]):.1f}",
        "d1": DEPTH_T[0], "d2": DEPTH_T[1], "depth1": low, "depth2": high,
    }}


def followup_part3_args(seed: int) -> dict[str, Any]:
    """dh zero but at the last step: db[t] is then the product of a[t+1 .. T-1]."""
    rng = np.random.default_rng(0)
    case = make_case(rng, 64, 1)
    a = np.full((64, 1), 0.9)
    dh = np.zeros((64, 1))
    dh[-1] = 1.0
    h = recurrence(a, case["b"], case["h0"])
    return {"a": a, "h0": case["h0"], "h": h, "dh": dh}


def interpret_part3(data: dict[str, Any]) -> dict[str, Any]:
    from grader.round_api.judge import unavailable

    if data["raised"]:
        return unavailable(data["raised"]["message"])
    db = np.abs(np.asarray(data["db"], dtype=np.float64)[:, 0])
    return {"status": "measured", "values": {
        "last": f"{db[-1]:.3g}", "middle": f"{db[32]:.3g}", "first": f"{db[0]:.3g}",
        "expected": f"{0.9 ** 63:.3g}"}}


def followup_part4_args(seed: int) -> dict[str, Any]:
    rng = np.random.default_rng(0)
    return {"case": make_case(rng, 64, 4).data()}


def interpret_part4(data: dict[str, Any]) -> dict[str, Any]:
    from grader.round_api.judge import unavailable

    if data["raised"]:
        return unavailable(data["raised"]["message"])
    return {"status": "measured", "values": {
        "yours": data["function"]["numbers"], "count": data["function"]["count"],
        "nodes": data["function"]["nodes"], "loop": data["loop"]["numbers"],
        "loop_count": data["loop"]["count"], "loop_nodes": data["loop"]["nodes"],
        "td": 64 * 4}}
