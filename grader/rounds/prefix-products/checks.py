"""Prefix products, judge side: the truth, the inputs, the known mistakes, the special judges.

checks.toml names everything here that a check uses. Nothing in this module runs beside
candidate code: it runs in the judge, where it computes what the answers should be.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import replace
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np

from grader.round_api.judge import (
    TIMED_RTOL,
    WATCHED_ANSWERS_HINT,
    Case,
    Context,
    Diagnosis,
    Measured,
    Plan,
    Round,
    Verdict,
    failed,
    first_unmatched,
    format_raised,
    held_size,
    judge_cases,
    load_reference_part,
    matches,
    mutant_diagnosis,
    passed,
    raised_verdict,
    settled,
    skipped,
    spread_out,
    spread_text,
    tree_difference,
    tree_matches,
    undecided,
)

ROUND = Round.load(Path(__file__).resolve().parent)

# --- the truth: the numpy references, evaluated in float64 ------------------------------------


@cache
def _reference(part_id: str) -> Any:
    return load_reference_part(ROUND, ROUND.part(part_id), "numpy")


def forward(W: np.ndarray) -> np.ndarray:
    W64 = W.astype(np.float64)
    return _reference("part1").prefix_products_out(W64, np.empty_like(W64))


def backward(W: np.ndarray, dP: np.ndarray) -> np.ndarray:
    return _reference("part3").prefix_products_backward(W.astype(np.float64),
                                                        dP.astype(np.float64))


def scan_levels(W: np.ndarray) -> list[tuple[int, np.ndarray]]:
    return _reference("part4").hillis_steele_scan_forward(W.astype(np.float64))[1]


def expected_levels(n: int) -> int:
    """ceil(log2 N) levels for N >= 1 (none for N = 1)."""
    return math.ceil(math.log2(n)) if n > 1 else 0


def forward_of(case: Case) -> np.ndarray:
    return forward(case["W"])


def backward_of(case: Case) -> np.ndarray:
    return backward(case["W"], case["dP"])


def loss(inputs: dict[str, np.ndarray]) -> float:
    """The scalar whose gradient the backward computes: sum(P * dP)."""
    return float(np.sum(forward(inputs["W"]) * inputs["dP"]))


# --- inputs: well-scaled random stacks over many shapes and both float dtypes ------------------
#
# Long products of plain Gaussian matrices explode or vanish, which hides order mistakes behind
# inf and 0. Each W[i] here is U @ diag(exp(0.2 g)) @ V with U, V random orthogonal, so the
# singular values of a product random-walk slowly around 1 and every factor's order matters.

FORWARD_SHAPES: tuple[tuple[int, int], ...] = (
    (1, 1), (1, 3), (2, 2), (3, 3), (5, 3), (8, 2), (17, 3),
    (4, 8), (16, 8), (33, 1), (64, 4), (7, 2), (12, 3),
)
LEVEL_SIZES = (1, 2, 3, 4, 5, 8, 9, 16, 17, 33)
COMPLEXITY_SIZES = (16, 64)
COMPLEXITY_D = 4
CPU_GROWTH_D = 32
"""About part3.complexity's D (held_size draws it near it, per run): large enough that a D x D
product's arithmetic, not the call that starts it, is the cost of a step. At D = 4 a call costs
about as much as its product, and an O(N^2 * D^3) closed form batched into a few hundred calls grew
little faster than the reference's O(N) calls; at D = 32 its N^2 products show."""


def random_orthogonal(rng: np.random.Generator, n: int, d: int) -> np.ndarray:
    """n Haar-random d x d orthogonal matrices (QR with the sign fix)."""
    q, r = np.linalg.qr(rng.standard_normal((n, d, d)))
    signs = np.sign(np.diagonal(r, axis1=-2, axis2=-1))
    signs[signs == 0] = 1.0
    return q * signs[:, None, :]


def well_scaled(rng: np.random.Generator, n: int, d: int) -> np.ndarray:
    """n well-conditioned d x d matrices with singular values near 1 (float64)."""
    if n == 0:
        return np.zeros((0, d, d))
    singular = np.exp(0.2 * rng.standard_normal((n, d)))
    return random_orthogonal(rng, n, d) * singular[:, None, :] @ random_orthogonal(rng, n, d)


def make_case(rng: np.random.Generator, n: int, d: int, dtype: str = "float64") -> Case:
    W = well_scaled(rng, n, d).astype(dtype)
    dP = rng.standard_normal((n, d, d)).astype(dtype)
    return Case({"W": W, "dP": dP}, (("N", n), ("D", d)), dtype)


def many(rng: np.random.Generator) -> list[Case]:
    """Every forward shape in float64; those with N > 1 again in float32; then one float64
    shape drawn from the run's seed (N from 9 to 40, D from 5 to 12), so that code cannot be
    right at the fixed shapes alone."""
    cases = [make_case(rng, n, d, "float64") for n, d in FORWARD_SHAPES]
    cases += [make_case(rng, n, d, "float32") for n, d in FORWARD_SHAPES if n > 1]
    n, d = int(rng.integers(9, 41)), int(rng.integers(5, 13))
    return [*cases, make_case(rng, n, d, "float64")]


def empty(rng: np.random.Generator) -> list[Case]:
    return [Case({"W": np.zeros((0, 3, 3)), "dP": np.zeros((0, 3, 3))}, (("N", 0), ("D", 3)))]


def sizes(*pairs: tuple[int, int]) -> Callable[[np.random.Generator], list[Case]]:
    """An input maker: one float64 case per (N, D)."""
    return lambda rng: [make_case(rng, n, d) for n, d in pairs]


def small(n: int, d: int) -> Callable[[np.random.Generator], Case]:
    return lambda rng: make_case(rng, n, d)


one_5x3 = small(5, 3)
one_4x3 = small(4, 3)
well_formed = sizes((5, 3), (3, 3), (1, 2))
"""The well-formed inputs a validation must accept: N above D, N equal to D (a test of the
wrong axes lets it through) and one matrix, so that refusing them all says the check refuses
everything, and refusing some names which."""


def unit_upstreams_4x3(rng: np.random.Generator) -> list[Case]:
    """One 4x3 W, float64, with an upstream dP that is 1 at one entry and 0 elsewhere, for
    every entry: the backward's results are the rows of the Jacobian it implies, which the
    judge compares with the products' exact one (gradcheck's slow mode, with the truth kept
    on the judge's side)."""
    case = one_4x3(rng)
    W = case["W"]
    cases = []
    for k, unit in enumerate(np.eye(W.size).reshape(W.size, *W.shape)):
        index = tuple(int(i) for i in np.unravel_index(k, W.shape))
        cases.append(Case({"W": W, "dP": unit}, case.dims, case.dtype,
                          label=f"N=4, D=3, float64, dP = 1 at {index} and 0 elsewhere"))
    return cases


one_6x3 = small(6, 3)
# Property checks run at N = 0, 1 and 2 too: a slip that only shows on tiny stacks (returning W
# itself when N <= 1, a square check that N = 1 never reaches) must not pass.
tiny_and_7 = sizes((0, 3), (1, 3), (2, 2), (7, 3))
tiny_and_6 = sizes((0, 3), (1, 3), (2, 2), (6, 3))
# D = 1 and D = 12 too: whether a matmul that writes into one of its operands goes wrong
# depends on the size (torch reads the operand whole below D = 9 and D > 1, and blocks it
# from there), so a slip can pass at small D alone.
aliasing_shapes = sizes((1, 3), (2, 2), (5, 3), (9, 4), (3, 1), (4, 12))


def both_dtypes(rng: np.random.Generator) -> list[Case]:
    return [make_case(rng, 4, 3, dtype) for dtype in ("float32", "float64")]


def growing(rng: np.random.Generator) -> list[Case]:
    return [make_case(rng, n, COMPLEXITY_D) for n in COMPLEXITY_SIZES]


depth_sizes = sizes((16, 2), (128, 2))
def cpu_sizes(rng: np.random.Generator) -> list[Case]:
    """part3.complexity's sizes, one process each: N = 1 (what every run pays whatever the
    size), then a middle and a large N drawn from the run's seed (7 to 9, 250 to 300), so that
    code cannot tell the measured sizes from their numbers (and pad one of them), nor the
    measured D (near CPU_GROWTH_D: held_size). The large N is over 30 times the middle one: the
    closed form's growth (N^2) then exceeds the reference's several times, honest code's 0.8 to
    1.3 times, against the 2x allowed. Padding the smaller sizes to flatten that growth leaves
    the large size's cost: the closed form's is over 12 times the reference's work per call
    there, honest code's at most about 3 times (7 for a numpy product spelled as a broadcast
    multiply-and-sum), against the 6x allowed."""
    middle, large = int(rng.integers(7, 10)), int(rng.integers(250, 301))
    d = held_size(rng, CPU_GROWTH_D)
    return [make_case(rng, n, d) for n in (1, middle, large)]


def with_levels(case: Case) -> Case:
    """The case with the reference's levels beside it (in its dtype), for the backward to be
    tried on them too."""
    levels = [[step, old.astype(case.dtype)] for step, old in scan_levels(case["W"])]
    return Case(case.inputs, case.dims, case.dtype, case.label, {"levels": levels})


def level_cases(rng: np.random.Generator) -> list[Case]:
    return [make_case(rng, n, 2) for n in LEVEL_SIZES]


def _malformed(shapes: list[tuple[str, tuple[int, ...], tuple[int, ...]]]) -> list[Case]:
    return [Case({"W": np.ones(w), "dP": np.ones(other)}, label=label)
            for label, w, other in shapes]


def _bad_w(n: int = 4, d: int = 3) -> list[tuple[str, tuple[int, ...], tuple[int, ...]]]:
    """(description, W shape, second-argument shape) with a malformed W: at N = 0 and 1 too,
    where a forgotten square check is never reached by a matmul."""
    return [
        ("W has ndim 2", (d, d), (d, d)),
        ("W has ndim 4", (n, 1, d, d), (n, 1, d, d)),
        ("W is not square", (n, d, d + 1), (n, d, d + 1)),
        ("W is not square (N = 1)", (1, d, d + 1), (1, d, d + 1)),
        ("W is not square (N = 0)", (0, d, d + 1), (0, d, d + 1)),
    ]


def malformed_pairs(rng: np.random.Generator) -> list[Case]:
    """Malformed W, or a second argument (P or dP) of the wrong shape."""
    n, d = 4, 3
    return _malformed(_bad_w(n, d) + [
        ("second argument has a different N", (n, d, d), (n + 1, d, d)),
        ("second argument has a different D", (n, d, d), (n, d + 1, d + 1)),
        ("second argument has a different N (N = 1)", (1, d, d), (2, d, d)),
        ("second argument has W's element count in another shape", (n, d, d), (d, n, d)),
        ("second argument has W's element count, each matrix flattened", (n, d, d),
         (n, d * d)),
    ])


def malformed_w(rng: np.random.Generator) -> list[Case]:
    """Malformed W alone (the one-argument functions)."""
    return _malformed(_bad_w())


def complexity_budget(case: Case) -> int:
    """4x the reference's three D x D matmuls per step (forward, adjoint, dW)."""
    return 4 * 3 * 2 * case.dim("N") * case.dim("D") ** 3


def scan_backward_budget(case: Case) -> int:
    """4x the reference scan backward's matmul flops: per level of step s, products over the
    N - s slots it combines (2 D^3 flops each)."""
    n, d = case.dim("N"), case.dim("D")
    steps = [1 << k for k in range(max(n - 1, 0).bit_length())]
    return 4 * 2 * d ** 3 * sum(n - s for s in steps)


# --- the known mistakes -------------------------------------------------------------------------


def _T(a: np.ndarray) -> np.ndarray:
    return np.swapaxes(a, -1, -2)


def _f64(case: Case) -> np.ndarray:
    return case["W"].astype(np.float64)


def _chain(W: np.ndarray, step: Callable[[np.ndarray, np.ndarray], np.ndarray]) -> np.ndarray:
    out = np.empty_like(W)
    out[0] = W[0]
    for i in range(1, len(W)):
        out[i] = step(out[i - 1], W[i])
    return out


def never_written(case: Case, actual: np.ndarray) -> bool:
    """The caller's buffer still holds nothing but its NaN prefill."""
    return actual.size > 0 and bool(np.isnan(actual).all())


def first_slot_unwritten(case: Case, actual: np.ndarray) -> bool:
    """Everything right but P[0]: the first slot was never written."""
    expected = forward_of(case)
    return (case.dim("N") > 1 and matches(actual[1:], expected[1:], case.dtype)
            and not matches(actual[:1], expected[:1], case.dtype))


def reversed_order(case: Case) -> np.ndarray:
    return _chain(_f64(case), lambda p, w: w @ p)


def elementwise(case: Case) -> np.ndarray:
    return _chain(_f64(case), lambda p, w: p * w)


def transposed_factor(case: Case) -> np.ndarray:
    return _chain(_f64(case), lambda p, w: p @ w.T)


def exclusive(case: Case) -> np.ndarray:
    W = _f64(case)
    out = np.empty_like(W)
    out[0] = np.eye(W.shape[1])
    for i in range(1, len(W)):
        out[i] = out[i - 1] @ W[i - 1]
    return out


def pairwise(case: Case) -> np.ndarray:
    W = _f64(case)
    out = W.copy()
    out[1:] = W[:-1] @ W[1:]
    return out


def stale_reads(case: Case) -> np.ndarray:
    """A scan that updates in place in ascending order, so a level reads its own new values."""
    current = _f64(case).copy()
    step = 1
    while step < len(current):
        for i in range(step, len(current)):
            current[i] = current[i - step] @ current[i]
        step *= 2
    return current


def _scan(W: np.ndarray, keep_going: Callable[[int, int], bool], swap: bool = False) -> np.ndarray:
    current = W.copy()
    step = 1
    while keep_going(step, len(W)):
        new = current.copy()
        new[step:] = current[step:] @ current[:-step] if swap else current[:-step] @ current[step:]
        current = new
        step *= 2
    return current


def swapped_combine(case: Case) -> np.ndarray:
    return _scan(_f64(case), lambda s, n: s < n, swap=True)


def too_few_levels(case: Case) -> np.ndarray:
    return _scan(_f64(case), lambda s, n: 2 * s < n)


def too_few_levels_half(case: Case) -> np.ndarray:
    return _scan(_f64(case), lambda s, n: 2 * s <= n and s < n)


_ADJOINT_STEPS: dict[str, Callable[[np.ndarray, np.ndarray, np.ndarray], np.ndarray]] = {
    "adj @ W.T": lambda adj, w, p: adj @ w.T,
    "adj @ W": lambda adj, w, p: adj @ w,
    "W.T @ adj": lambda adj, w, p: w.T @ adj,
    "adj @ P.T": lambda adj, w, p: adj @ p.T,
}
_LEFT_FACTORS: dict[str, Callable[[np.ndarray, np.ndarray, int], np.ndarray]] = {
    "P[i-1]": lambda P, W, i: P[i - 1] if i > 0 else np.eye(W.shape[1]),
    "P[i]": lambda P, W, i: P[i],
    "W[i-1]": lambda P, W, i: W[i - 1] if i > 0 else np.eye(W.shape[1]),
    "P[-1] at 0": lambda P, W, i: P[i - 1],
}


def _backward(case: Case, *, accumulate: bool = True, add_before_use: bool = True,
              transpose_left: bool = True, left: str = "P[i-1]", right_side: bool = False,
              adjoint_step: str = "adj @ W.T", stop: int = -1,
              upward: bool = False) -> np.ndarray:
    """The sequential backward with one knob turned to a known slip: the left factor, its
    transpose or side, where dP[i] joins the adjoint, the adjoint step, the loop's range."""
    W, dP = _f64(case), case["dP"].astype(np.float64)
    n, d, _ = W.shape
    P = forward(W)
    dW = np.zeros_like(W)
    adj = np.zeros((d, d))
    order = range(0, n) if upward else range(n - 1, stop, -1)
    for i in order:
        if add_before_use:
            adj = adj + dP[i] if accumulate else dP[i]
        factor = _LEFT_FACTORS[left](P, W, i)
        factor = factor.T if transpose_left else factor
        dW[i] = adj @ factor if right_side else factor @ adj
        if not add_before_use:
            adj = adj + dP[i]
        adj = _ADJOINT_STEPS[adjoint_step](adj, W[i], P[i])
    return dW


def no_accumulation(case: Case) -> np.ndarray:
    return _backward(case, accumulate=False)


def direct_term_late(case: Case) -> np.ndarray:
    return _backward(case, add_before_use=False)


def left_not_transposed(case: Case) -> np.ndarray:
    return _backward(case, transpose_left=False)


def left_off_by_one(case: Case) -> np.ndarray:
    return _backward(case, left="P[i]")


def left_is_w(case: Case) -> np.ndarray:
    return _backward(case, left="W[i-1]")


def left_wraps_at_zero(case: Case) -> np.ndarray:
    return _backward(case, left="P[-1] at 0")


def left_on_the_right(case: Case) -> np.ndarray:
    return _backward(case, right_side=True)


def skips_first(case: Case) -> np.ndarray:
    return _backward(case, stop=0)


def sweeps_upward(case: Case) -> np.ndarray:
    return _backward(case, upward=True)


def adjoint_not_transposed(case: Case) -> np.ndarray:
    return _backward(case, adjoint_step="adj @ W")


def adjoint_wrong_side(case: Case) -> np.ndarray:
    return _backward(case, adjoint_step="W.T @ adj")


def adjoint_through_prefix(case: Case) -> np.ndarray:
    return _backward(case, adjoint_step="adj @ P.T")


def _scan_backward(case: Case, *, passthrough: bool = True, transposes: bool = True,
                   accumulate: bool = True, forward_order: bool = False, swapped: bool = False,
                   cached: str = "input") -> np.ndarray:
    """The level-by-level scan backward with one knob turned to a known slip: the
    pass-through, the transposes, += or =, the order of the levels, which operand gets which
    term, and whether each level cached its input (right) or its output."""
    levels = scan_levels(case["W"])
    if cached == "output":
        outputs = [old for _, old in levels[1:]] + [forward(case["W"])]
        levels = [(step, out) for (step, _), out in zip(levels, outputs, strict=True)]
    grad = case["dP"].astype(np.float64).copy()
    t = _T if transposes else (lambda a: a)
    for step, old in (levels if forward_order else reversed(levels)):
        new = np.zeros_like(grad)
        if passthrough:
            new[:step] += grad[:step]
        a_term = grad[step:] @ t(old[step:])
        b_term = t(old[:-step]) @ grad[step:]
        if swapped:
            a_term, b_term = t(old[:-step]) @ grad[step:], grad[step:] @ t(old[step:])
        if accumulate:
            new[:-step] += a_term
            new[step:] += b_term
        else:
            new[:-step] = a_term
            new[step:] = b_term
        grad = new
    return grad


def no_passthrough(case: Case) -> np.ndarray:
    return _scan_backward(case, passthrough=False)


def missing_transposes(case: Case) -> np.ndarray:
    return _scan_backward(case, transposes=False)


def assigns_instead_of_adding(case: Case) -> np.ndarray:
    return _scan_backward(case, accumulate=False)


def levels_walked_forward(case: Case) -> np.ndarray:
    return _scan_backward(case, forward_order=True)


def swapped_terms(case: Case) -> np.ndarray:
    return _scan_backward(case, swapped=True)


def cached_outputs(case: Case) -> np.ndarray:
    return _scan_backward(case, cached="output")


def previous_factor(case: Case) -> np.ndarray:
    """P[i] = P[i-1] @ W[i-1]: the factor one behind."""
    W = _f64(case)
    out = W.copy()
    for i in range(1, len(W)):
        out[i] = out[i - 1] @ W[i - 1]
    return out


def last_slot_unwritten(case: Case, actual: np.ndarray) -> bool:
    """Everything right but P[N-1]: the loop stopped one short."""
    expected = forward_of(case)
    return (case.dim("N") > 1 and matches(actual[:-1], expected[:-1], case.dtype)
            and not matches(actual[-1:], expected[-1:], case.dtype))


def recomputed_in_place(case: Case) -> np.ndarray:
    """With P is W: each prefix recomputed from scratch as W[0] @ ... @ W[i], reading slots the
    earlier iterations already overwrote with prefixes."""
    W = _f64(case).copy()
    for i in range(len(W)):
        product = W[0].copy()
        for j in range(1, i + 1):
            product = product @ W[j]
        W[i] = product
    return W


# --- special judges -----------------------------------------------------------------------------


def judge_empty_out(params: dict[str, str]) -> Callable[[dict[str, Any]], Verdict]:
    """Part 1 at N = 0: nothing raised, and P itself came back."""

    def judge(obs: dict[str, Any]) -> Verdict:
        if obs["raised"]:
            return failed(f"W of shape (0, 3, 3) raised {format_raised(obs['raised'])}",
                          hint=params["raised_hint"])
        if not obs["is_p"]:
            return failed("W of shape (0, 3, 3): did not return P itself")
        return passed()

    return judge


def empty_out(ctx: Context, params: dict[str, str]) -> Plan:
    return Plan("round:empty_out", {"function": "prefix_products_out"}, judge_empty_out(params))


def returns_p(ctx: Context, params: dict[str, str]) -> Plan:
    case = make_case(ctx.rng(), 5, 3)

    def judge(obs: dict[str, Any]) -> Verdict:
        if obs["raised"]:
            return raised_verdict(case.describe(), obs["raised"])
        if not obs["is_p"]:
            return failed(f"{case.describe()}: returned a different {obs['returned']}, not P",
                          hint=params["hint"])
        return passed()

    return Plan("round:returns_p", {"case": case.data()}, judge)


def storage(ctx: Context, params: dict[str, str]) -> Plan:
    """A non-contiguous P keeps its data pointer and strides, and holds the answer."""
    case = make_case(ctx.rng(), 6, 3)

    def judge(obs: dict[str, Any]) -> Verdict:
        where = f"{case.describe()}, P a non-contiguous (column-major) buffer"
        if obs["raised"]:
            return failed(f"{where}: raised {format_raised(obs['raised'])}",
                          hint=params["raised_hint"])
        if not obs["same_address"] or obs["strides"][0] != obs["strides"][1]:
            return failed(f"{where}: P's data pointer or strides changed {obs['strides']}",
                          hint=params["moved_hint"])
        if not matches(obs["value"], forward_of(case), case.dtype):
            return failed(f"{where}: P does not hold the prefix products afterwards",
                          hint=params["wrong_hint"])
        return passed()

    return Plan("round:storage", {"case": case.data()}, judge)


def memory(ctx: Context, params: dict[str, str]) -> Plan:
    """Extra memory during the call: a D x D temporary, not a copy of the stack, in a call
    that filled P right (code that tells the measured call apart answers it wrong)."""
    case = make_case(ctx.rng(), 256, 4)
    stack_bytes = case["W"].nbytes

    def judge(obs: dict[str, Any]) -> Verdict:
        extra = obs["extra"]
        summary = f"{case.describe()}: {extra} bytes extra; the whole stack is {stack_bytes}"
        found = failed(summary, hint=params["hint"]) if extra >= stack_bytes // 2 \
            else passed(summary)
        wrong = tree_difference(obs["P"], forward_of(case), case.dtype, "P")
        if wrong is None:
            return found
        return replace(failed(f"{case.describe()}: the call whose memory was measured left a "
                              f"wrong P ({wrong}), so its memory is not that of the work",
                              hint=WATCHED_ANSWERS_HINT), by_values=True, otherwise=found)

    return Plan("round:memory", {"case": case.data()}, judge)


def levels(ctx: Context, params: dict[str, str]) -> Plan:
    """The forward returns ceil(log2 N) levels."""
    cases = level_cases(ctx.rng())

    def judge(rows: list[dict[str, Any]]) -> Verdict:
        for row in rows:
            if row["raised"]:
                return failed(f"N={row['n']}: raised {format_raised(row['raised'])}")
            want = expected_levels(row["n"])
            if row["levels"] != want:
                return failed(f"N={row['n']}: {row['levels']} levels, expected ceil(log2 N) = "
                              f"{want}", hint=params["hint"])
        return passed(f"level counts right for N in {', '.join(map(str, LEVEL_SIZES))}")

    return Plan("round:levels", {"cases": [c.data() for c in cases]}, judge)


# --- part4.timing: the scan against the reference scan -----------------------------------------

SCAN_FIGURES = ("your scan forward", "your scan backward")
REFERENCE_FIGURES = ("reference scan forward", "reference scan backward")
SEQUENTIAL_FIGURES = ("reference sequential forward", "your sequential forward")


def scan_flops(n: int, d: int) -> int:
    """Multiply-adds x2 of the Hillis-Steele forward: each level multiplies N - step pairs."""
    flops, step = 0, 1
    while step < n:
        flops += 2 * d**3 * (n - step)
        step *= 2
    return flops


def _reference_backward(levels: list[list[Any]], dP: np.ndarray) -> np.ndarray:
    """The reference scan backward (float64) on levels the candidate's forward produced."""
    cast = [(int(step), np.asarray(old, dtype=np.float64)) for step, old in levels]
    return _reference("part4").hillis_steele_scan_backward(cast, dP.astype(np.float64))


def scan_backward(ctx: Context, params: dict[str, Any]) -> Plan:
    """The backward on the candidate's own levels against the truth, and on the reference's
    levels too, so the card can say which half is wrong: the backward, or the forward's
    levels that feed it."""
    cases = [with_levels(c) for c in many(ctx.rng())]
    stages = {"forward": {"prefix": params["forward_raised"], "hint": "Fix part4.forward first."}}

    def differential(wrong: Sequence[tuple[Case, Any]], raised: dict[str, Any] | None,
                     elsewhere: Sequence[tuple[Case, Any]]) -> Diagnosis | None:
        return mutant_diagnosis(ROUND, ctx.part_id, ctx.flavor,
                                 {"function": None, "run": "scan_gradient"}, wrong, "dW", raised,
                                 ctx.workspace)

    def judge(observed: list[dict[str, Any]]) -> Verdict:
        verdict = judge_cases(ctx, cases, observed, backward_of, "dW", params["mistakes"],
                              params["hint"], "Valid input must not raise; " + params["hint"],
                              params["shape_hint"], stages, differential)
        if verdict.status == "passed" or any(o["raised"] for o in observed):
            return verdict
        right_on_reference = all(
            o.get("on_reference") is not None
            and tree_matches(o["on_reference"], backward_of(c), c.dtype)
            for c, o in zip(cases, observed, strict=False))
        own_levels_fine = all(o.get("levels") is not None and tree_matches(
            _reference_backward(o["levels"], c["dP"]), backward_of(c), c.dtype)
            for c, o in zip(cases, observed, strict=False))
        named = not (verdict.hint or "").endswith(params["hint"])  # else what holds, then it
        if right_on_reference and not named:
            return failed(verdict.message, hint=params["fix_forward"])
        if own_levels_fine and not named:
            return replace(verdict, hint=f"{params['fix_backward']} {verdict.hint}")
        return verdict

    return Plan("call_each", {"function": None, "run": "scan_gradient_both",
                              "cases": [c.data() for c in cases]}, judge)


def timing(ctx: Context, params: dict[str, Any]) -> Plan:
    """Time the candidate's scan against the reference scan (timed in a child of its own), on
    CUDA when there is one. The candidate's own Part 2 is timed too when it passed earlier in
    this run; otherwise the sequential figure is the reference's alone, and the card says why."""
    device = "cuda" if ctx.cuda and ctx.flavor == "torch" and ctx.device != "cpu" else "cpu"
    n, d = params["sizes"][device]
    rng = ctx.rng()
    W = well_scaled(rng, n, d).astype(np.float32)
    dP = rng.standard_normal((n, d, d)).astype(np.float32)
    sequential = "part2" in ctx.passed_parts
    note = None if sequential else (
        "your Part 2 did not pass in this run, so only the reference's sequential forward was "
        "timed" if "part2" in ctx.graded_parts else
        "your Part 2 was not graded in this run, so only the reference's sequential forward "
        "was timed")
    settings = {"W": W, "dP": dP, "device": ctx.device, "repeat_s": params["repeat_s"][device],
                "budget_s": params["budget_share"] * ctx.timeout_s,
                "call_limit_s": params["call_limit_share"] * ctx.timeout_s,
                "time_sequential": sequential, "order_seed": int(rng.integers(2**62)),
                "sequential_module": ROUND.part("part2").module, "sequential_note": note}
    # Each round's calls get inputs of their own (the reference's process of the round the
    # same): nothing one process kept, in memory or in a file, answers another's.
    rounds = tuple(({"settings": {**settings, "order_seed": int(rng.integers(2**62))}},)
                   for _ in range(TIMING_ROUNDS))
    return Plan("round:time_scan", {"settings": settings},
                timing_judge(params, settings["budget_s"], device), uses_device=True,
                baseline=("round:time_reference", {"settings": settings}),
                measured=Measured(rounds, least=1))


TIMING_ROUNDS = 5
"""The most rounds of the timing check (the reference's process, then the candidate's); two
or three in a row must agree (grader.checks.settle) unless the figures are only information."""


def _figure_lines(obs: dict[str, Any], figures: dict[str, Any], budget_s: float) -> list[str]:
    lines = [f"{obs['device_name']} ({obs['device']}), N={obs['n']}, D={obs['d']}, float32"]
    flops = scan_flops(obs["n"], obs["d"])
    for name in (*SCAN_FIGURES, *REFERENCE_FIGURES, *SEQUENTIAL_FIGURES):
        stats = figures.get(name)
        if stats is None:
            continue
        rate = f"   {flops / stats['median'] / 1e9:.1f} GFLOP/s" if "scan forward" in name else ""
        lines.append(f"  {name:<30} {stats['median'] * 1e3:9.3f} ms  {spread_text(stats)} "
                     f"(n={stats['repeats']}){rate}")
    seq = figures.get("your sequential forward") or figures.get("reference sequential forward")
    scan = figures.get("your scan forward")
    if seq and scan:
        lines.append(f"  scan speedup over sequential forward: "
                     f"{seq['median'] / scan['median']:.2f}x")
    if obs.get("sequential_note"):
        lines.append(f"  ({obs['sequential_note']})")
    if obs.get("untimed"):
        lines.append(f"  not timed (the {budget_s:g} s timing budget ran out): "
                     + ", ".join(obs["untimed"]))
    return lines


def _timing_failure_hint(raised: dict[str, Any], params: dict[str, str]) -> str:
    """Why a scan that passed every check on CPU tensors could not be timed on CUDA ones."""
    if raised["type"] == "TooSlow":
        return params["too_slow_hint"]
    if "device" in raised["message"].lower():
        return params["device_hint"]
    return params["raised_hint"]


def _ratio(figures: dict[str, Any]) -> float | None:
    """The candidate's scan time over the reference scan's, when both were timed."""
    if any(name not in figures for name in (*SCAN_FIGURES, *REFERENCE_FIGURES)):
        return None
    yours = sum(figures[name]["median"] for name in SCAN_FIGURES)
    return yours / sum(figures[name]["median"] for name in REFERENCE_FIGURES)


TIMED_PAIRS = tuple(zip((*SCAN_FIGURES, "your sequential forward"),
                        (*REFERENCE_FIGURES, "reference sequential forward"), strict=True))
"""Each function the candidate's process times, with the reference's it is compared with."""


def _unmatched_answers(rounds: list[tuple[dict[str, Any], dict[str, Any]]]) -> str:
    """Which timed call of the candidate's answered otherwise than the reference's same call
    (the same inputs: see probes._Bench), in words; "" where every call both made agrees."""
    for mine, theirs in rounds:
        for yours, reference in TIMED_PAIRS:
            call = first_unmatched(mine.get("answers", {}).get(yours, []),
                                   theirs.get("answers", {}).get(reference, []),
                                   TIMED_RTOL["float32"])
            if call is not None:
                return (f"call {call + 1} of {yours} answered otherwise than the reference's "
                        "on the same inputs, so its time is not the cost of the work")
    return ""


def timing_judge(params: dict[str, Any], budget_s: float,
                 device: str) -> Callable[[dict[str, Any]], Verdict]:
    """The verdict of part4.timing. `device` is the judge's own finding of where the timing
    runs (CUDA when this machine has it and the request allows it): a child that reports no
    CUDA where the judge found some is not believed, and the check keeps its points."""
    limit = float(params["speed_limit"])

    def judge(both: dict[str, Any]) -> Verdict:
        if both["baseline"] is None:
            return failed(f"the reference scan could not be timed: {both['baseline_error']}")
        rounds = [(mine[0]["data"], theirs[0]["data"])
                  for mine, theirs in zip(both["yours"], both["baseline"], strict=True)]
        obs, base = rounds[-1]
        figures = {**base["figures"], **obs["figures"]}
        lines = _figure_lines(obs, figures, budget_s)
        raised = obs["raised"]
        if device == "cuda" and obs["why_not_cuda"] is not None:
            return skipped("\n".join([
                f"this machine has CUDA, but your scan's process reported "
                f"{obs['why_not_cuda']}: not timed, so no points", *lines]))
        wrong = _unmatched_answers(rounds)
        if obs["why_not_cuda"] is not None:
            note = f"{obs['why_not_cuda']}: CPU figures for information"
            if wrong:
                note += f" ({wrong})"
            if raised:
                note += f" (stopped early: {format_raised(raised)})"
            ratio = _ratio(figures)
            if ratio is not None and ratio > limit:
                note += (f"; your scan took {ratio:.1f}x the reference's here, so on a GPU, "
                         f"where the bar is {limit:g}x, it would likely fail")
            return skipped("\n".join([note, *lines]), not_applicable=True)
        if raised:
            return failed("\n".join([f"could not time your scan: {format_raised(raised)}",
                                      *lines]), hint=_timing_failure_hint(raised, params))
        strays = [f"{name} on {where}" for name, where in obs.get("returned", {}).items()
                  if not where.startswith(obs["device"])]
        if strays:
            return failed("\n".join([f"your scan returned {' and '.join(strays)} for inputs on "
                                      f"{obs['device']}: part of it ran elsewhere", *lines]),
                          hint=params["device_hint"])
        if wrong:
            return failed("\n".join([wrong, *lines]), hint=WATCHED_ANSWERS_HINT)
        missing = [name for name in (*REFERENCE_FIGURES, *SCAN_FIGURES) if name not in figures]
        if missing:
            return failed("\n".join([f"your scan was too slow to time within the "
                                      f"{budget_s:g} s timing budget", *lines]),
                          hint=params["slow_hint"])
        ratios = [_ratio({**theirs["figures"], **mine["figures"]}) for mine, theirs in rounds]
        so_far = [None if None in ratios[:n] else float(np.median(np.array(ratios[:n])))
                  for n in range(1, len(ratios) + 1)]
        ratio = so_far[-1] or 0.0
        each = ", ".join("-" if r is None else f"{r:.2f}x" for r in ratios)
        summary = (f"your scan takes {ratio:.2f}x the reference scan's time (limit {limit:g}x; "
                   f"the median of {len(ratios)} rounds: {each})")
        noisy = spread_out([[r for r in ratios if r is not None]])
        over = settled(so_far, limit, noisy)
        if over is None:
            return undecided("\n".join([summary, *lines]))
        if over:
            return failed("\n".join([summary, *lines]), hint=params["slow_hint"])
        return passed("\n".join([summary, *lines]))

    return judge


# --- the interviewer's follow-ups ----------------------------------------------------------------

PROBED_SLOT = 2
FOLLOWUP_N = 5
SCAN_SIZES = (8, 64)
SCAN_D = 4


def followup_part1_args(seed: int) -> dict[str, Any]:
    from grader.round_api.judge import followups

    doc = followups(ROUND)["part1"]
    return {"snippets": {"separate": doc.text("separate snippet"),
                         "aliased": doc.text("aliased snippet")}}


def _annotate(run: dict[str, Any]) -> dict[str, Any]:
    """Name the known autograd error a run raised (by its `grader explain` topic), and check a
    gradient that came back."""
    from grader.round_api.judge import error_topic

    out = {k: v for k, v in run.items() if k not in ("grad", "W", "raised")}
    raised = run.get("raised")
    out["raised"] = {k: raised[k] for k in ("type", "message", "where")} if raised else None
    topic = error_topic(ROUND, raised["message"]) if raised else None
    out["error"] = topic.name if topic else None
    if raised is None and "grad" in run:
        W = np.array(run["W"])
        out["grad_ok"] = matches(np.array(run["grad"]), backward(W, np.ones_like(W)), "float64")
    return out


def _saved_views(run: dict[str, Any]) -> dict[str, Any] | None:
    saved = run.get("saved") or []
    if not saved:
        return None
    return {"saved": ", ".join(f"P[{s['slot']}] at version {s['version']}" for s in saved),
            "final": run["final_version"], "last_slot": saved[-1]["slot"],
            "last_version": saved[-1]["version"]}


def interpret_part1(data: dict[str, Any]) -> dict[str, Any]:
    """Which runs raised which known error: the candidate's own, or the textbook loop's when
    the candidate's code raised nothing an interviewer could ask about."""
    from grader.round_api.judge import unavailable

    if data["baseline"] is None:
        return unavailable(data["baseline_error"])
    yours = [_annotate(r) for r in data["yours"]]
    textbook = [_annotate(r) for r in data["baseline"]]
    if any(r["error"] for r in yours):
        runs, whose, note = yours, "your code", ""
        stages = " and ".join(sorted({r["stage"] for r in yours if r["raised"]}, reverse=True))
        question: str | list[str] = ["question", f"raised in {stages}", "explain yours"]
    else:
        yours_ran = not any(r["raised"] for r in yours)
        runs, whose = textbook, "the textbook loop"
        question = "question when yours ran" if yours_ran else "question when yours failed"
        note = ("Your code ran under autograd without an error" if yours_ran else
                "Your code did not run on torch tensors") + \
            "; the interviewer tries the textbook in-place loop instead."
    kinds = {r["error"] for r in runs if r["error"]}
    answer = ["topic:version-counter"]
    views = next((v for r in runs if r["error"] == "version-counter"
                  and (v := _saved_views(r))), None)
    if views:
        answer.append("saved views")
    if "leaf-inplace" in kinds:
        answer.append("topic:leaf-inplace")
    if "detached-graph" in kinds:
        answer.append("detached")
    if question == "question when yours ran":
        answer.append("escape")
    answer.append("fixes")
    shown = [{"title": f"The interviewer runs {whose}", "snippet": r["snippet"],
              "raised": r["raised"], "line": r.get("line", "")} for r in runs if r["raised"]]
    return {"status": "demonstrated", "question": question, "answer": answer,
            "values": views or {}, "shown": shown, "note": note, "runs": runs}


def followup_part3_args(seed: int) -> dict[str, Any]:
    rng = np.random.default_rng(0)
    W = well_scaled(rng, FOLLOWUP_N, 3)
    dP = np.zeros_like(W)
    dP[PROBED_SLOT] = rng.standard_normal((3, 3))
    return {"W": W, "dP": dP}


def interpret_part3(data: dict[str, Any]) -> dict[str, Any]:
    from grader.round_api.judge import unavailable

    if data["raised"]:
        return unavailable(data["raised"]["message"])
    norms = [float(np.linalg.norm(m)) for m in data["dW"]]
    return {"status": "measured", "values": {
        "slot": PROBED_SLOT, "last": FOLLOWUP_N - 1, "norms": ", ".join(f"{n:.3g}" for n in norms),
    }, "norms": norms}


def followup_part4_args(seed: int) -> dict[str, Any]:
    rng = np.random.default_rng(0)
    return {"stacks": [well_scaled(rng, n, SCAN_D) for n in SCAN_SIZES]}


def interpret_part4(data: dict[str, Any]) -> dict[str, Any]:
    rows = [f"N={r['n']}: your scan {r['flops']} matmul flops in {r['levels']} levels; the loop "
            f"{2 * SCAN_D**3 * (r['n'] - 1)} flops in {r['n'] - 1} dependent steps"
            for r in data["rows"]]
    return {"status": "measured", "values": {"d": SCAN_D, "rows": "; ".join(rows)},
            "rows": data["rows"]}
