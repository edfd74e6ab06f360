"""Matmul backward, judge side: the truth, the inputs, the known mistakes, the special judges.

checks.toml names everything here that a check uses. Nothing in this module runs beside
candidate code: it runs in the judge, where it computes what the answers should be (with the
numpy references, in float64).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
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
    backward_sizes,
    drawn_sizes,
    explain_error,
    failed,
    format_raised,
    held_size,
    load_reference_part,
    matches,
    mismatched_inputs,
    passed,
    raised_verdict,
    tree_difference,
)

ROUND = Round.load(Path(__file__).resolve().parent)
Arrays = tuple[np.ndarray, np.ndarray, np.ndarray]

# --- the truth: the numpy references, evaluated in float64 ------------------------------------


@cache
def _reference() -> Any:
    return load_reference_part(ROUND, ROUND.part("part2"), "numpy")


def _f64(case: Case) -> Arrays:
    return (case["A"].astype(np.float64), case["B"].astype(np.float64),
            case["dC"].astype(np.float64))


def backward(A: np.ndarray, B: np.ndarray, dC: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    return _reference().batched_matmul_backward(A, B, dC)


def sum_to(grad: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    return _reference().sum_to_shape(grad, shape)


def gradients(case: Case) -> dict[str, np.ndarray]:
    dA, dB = backward(*_f64(case))
    return {"dA": dA, "dB": dB}


def product(case: Case) -> np.ndarray:
    A, B, _ = _f64(case)
    return A @ B


def loss(inputs: dict[str, np.ndarray]) -> float:
    """The scalar whose gradient the backward computes: sum((A @ B) * dC)."""
    return float(np.sum((inputs["A"] @ inputs["B"]) * inputs["dC"]))


# --- inputs ------------------------------------------------------------------------------------
#
# Square shapes come first: a formula with a missing or misplaced transpose still runs on them
# and gives wrong numbers the mistake can be named from; on the later shapes it raises.

Shape = tuple[int, ...]
PLAIN_SHAPES: tuple[tuple[int, int, int], ...] = (
    (3, 3, 3), (4, 4, 4), (2, 3, 4), (4, 3, 2), (1, 5, 3), (5, 1, 3), (3, 5, 1), (1, 1, 1),
    (6, 2, 7), (2, 7, 2), (8, 8, 1),
)
BATCHED_SHAPES: tuple[tuple[Shape, Shape], ...] = (
    ((4, 3, 3), (4, 3, 3)),           # square, the same batch on both sides
    ((4, 3, 3), (3, 3)),              # square, B broadcast over the batch
    ((3, 3), (2, 4, 3, 3)),           # square, A broadcast over a 2-D batch
    ((2, 3), (3, 4)),                 # no batch at all
    ((5, 2, 3), (5, 3, 4)),           # 1-D batch on both sides
    ((5, 2, 3), (3, 4)),              # B shared across the batch (a Linear layer)
    ((2, 3), (5, 3, 4)),              # A shared across the batch
    ((2, 3, 2, 3), (2, 3, 3, 4)),     # 2-D batch on both sides
    ((3, 1, 2, 3), (4, 3, 4)),        # a size-1 dim of A broadcasts, B lacks a dim
    ((1, 2, 3), (5, 3, 4)),           # A's size-1 batch dim broadcasts
    ((1, 2, 3), (4, 5, 3, 4)),        # A lacks a dim and its size-1 dim broadcasts
    ((2, 1, 2, 3), (1, 3, 3, 4)),     # each broadcast along the other's dim
    ((4, 1, 3), (2, 4, 3, 1)),        # M = 1 and N = 1, A lacks a dim
    ((2, 1, 1, 2, 2), (3, 1, 2, 3)),  # a 3-D batch, size-1 dims on both sides
)
BROADCAST = ((2, 1, 2, 3), (3, 3, 2))
GROWING_BATCH = (2, 64)
DTYPES = ("float64", "float32")


def output_shape(a: Shape, b: Shape) -> Shape:
    return (*np.broadcast_shapes(a[:-2], b[:-2]), a[-2], b[-1])


def sizes(a: Shape, b: Shape) -> tuple[tuple[str, int], ...]:
    return ("M", a[-2]), ("K", a[-1]), ("N", b[-1])


def make_case(rng: np.random.Generator, a: Shape, b: Shape, dtype: str = "float64",
              dims: tuple[tuple[str, int], ...] | None = None) -> Case:
    inputs = {"A": rng.standard_normal(a).astype(dtype), "B": rng.standard_normal(b).astype(dtype),
              "dC": rng.standard_normal(output_shape(a, b)).astype(dtype)}
    return Case(inputs, sizes(a, b) if dims is None else dims, dtype,
                label=f"A {a} @ B {b}, {dtype}")


def plain_cases(rng: np.random.Generator) -> list[Case]:
    """PLAIN_SHAPES, then one shape per dtype drawn from the run's seed (each size 9 to 40):
    code cannot be right at the fixed sizes alone (a tiled product that drops a partial tile
    past K = 8 was)."""
    fixed = [make_case(rng, (m, k), (k, n), dtype) for dtype in DTYPES
             for m, k, n in PLAIN_SHAPES]
    drawn = [(dtype, drawn_sizes(rng, 3, (9, 40))) for dtype in DTYPES]
    return fixed + [make_case(rng, (m, k), (k, n), dtype) for dtype, (m, k, n) in drawn]


def batched_cases(rng: np.random.Generator) -> list[Case]:
    """BATCHED_SHAPES in each dtype, then one broadcast per dtype drawn from the run's seed (a
    batch of 2 to 4 against A's size-1 axis, B lacking it; M, K and N from 9 to 24): code
    cannot be right at the fixed sizes alone."""
    shapes = [(a, b, dtype) for dtype in DTYPES for a, b in BATCHED_SHAPES]
    for dtype in DTYPES:
        batch, (m, k, n) = int(rng.integers(2, 5)), drawn_sizes(rng, 3)
        shapes.append(((batch, 1, m, k), (batch + 1, k, n), dtype))
    return [make_case(rng, a, b, dtype, (("batch dims", len(output_shape(a, b)) - 2),
                                         *sizes(a, b)))
            for a, b, dtype in shapes]


def one_plain(rng: np.random.Generator) -> Case:
    return make_case(rng, (3, 4), (4, 2))


def valid_plain(rng: np.random.Generator) -> list[Case]:
    """The well-formed products a validation must accept: M above N, a 1 x 1 times a row, and
    M equal to N (a test of the wrong axes lets it through), so that refusing them all says
    the check refuses everything, and refusing some names which."""
    return [one_plain(rng), make_case(rng, (1, 1), (1, 5)), make_case(rng, (2, 3), (3, 2))]


def one_broadcast(rng: np.random.Generator) -> Case:
    return make_case(rng, *BROADCAST)


def valid_broadcasts(rng: np.random.Generator) -> list[Case]:
    """Well-formed batches, broadcasting's edges among them: a batch axis of size 0 against
    one of size 1 (an empty batch: size 0, not 1) and a batch A lacks entirely."""
    return [one_broadcast(rng), make_case(rng, (0, 1, 2, 3), (1, 3, 2)),
            make_case(rng, (2, 3), (4, 3, 2))]


def dtype_plain(rng: np.random.Generator) -> list[Case]:
    """One 2-D case in each dtype: the gradients must come back in it."""
    return [make_case(rng, (3, 4), (4, 2), dtype) for dtype in DTYPES]


def dtype_broadcast(rng: np.random.Generator) -> list[Case]:
    return [make_case(rng, *BROADCAST, dtype) for dtype in DTYPES]


def growing_batch(rng: np.random.Generator) -> list[Case]:
    """A (S, 1, M, K) with B (2, K, N): an (S, 2) batch, with B's gradient summed over the S
    axis it lacks, so a loop over the batch or in that reduction grows with S."""
    return [make_case(rng, (s, 1, 2, 3), (2, 3, 2), dims=(("S", s),)) for s in GROWING_BATCH]


CPU_GROWTH_KN = 64
"""About K and N of part1.by_hand's runs (held_size draws each near it): each row of a product then
does thousands of multiply-adds, so that the backward's work at the middle size stands well above a
process's noise."""
CPU_GROWTH_MKN = 16
"""About M, K and N of part2.by_hand's runs (held_size draws each near it), whose size is the
batch."""


def cpu_sizes(rng: np.random.Generator) -> list[Case]:
    """part1.by_hand's sizes, one process each (backward_sizes): M = 1, then a middle and a
    large M, with K and N near CPU_GROWTH_KN."""
    k, n = held_size(rng, CPU_GROWTH_KN), held_size(rng, CPU_GROWTH_KN)
    return [make_case(rng, (m, k), (k, n)) for m in backward_sizes(rng)]


def cpu_batches(rng: np.random.Generator) -> list[Case]:
    """part2.by_hand's sizes, one process each (backward_sizes): a batch of S = 1, then a
    middle and a large S, each (M x K) @ (K x N), the three near CPU_GROWTH_MKN."""
    m, k, n = (held_size(rng, CPU_GROWTH_MKN) for _ in range(3))
    return [make_case(rng, (s, m, k), (s, k, n), dims=(("S", s),))
            for s in backward_sizes(rng)]


def _malformed(shapes: Sequence[tuple[str, Shape, Shape, Shape | None]]) -> list[Case]:
    cases = []
    for label, a, b, c in shapes:
        inputs = {"A": np.ones(a), "B": np.ones(b)}
        if c is not None:
            inputs["dC"] = np.ones(c)
        cases.append(Case(inputs, label=label))
    return cases


def malformed_2d(rng: np.random.Generator) -> list[Case]:
    """The classic slips, then every size of the contract A (M, K), B (K, N), dC (M, N) broken
    alone (mismatched_inputs)."""
    listed: list[tuple[str, Shape, Shape, Shape | None]] = [
        ("A has ndim 1", (3,), (3, 2), (2,)),
        ("A has ndim 3", (2, 2, 3), (3, 4), (2, 2, 4)),
        ("B has ndim 1", (2, 3), (3,), (2,)),
        ("A (2, 3) and B (4, 5): inner sizes differ", (2, 3), (4, 5), (2, 5)),
        ("dC is (N, M), not (M, N)", (2, 3), (3, 4), (4, 2)),
        ("dC has one row too many", (2, 3), (3, 4), (3, 4)),
    ]
    cases = _malformed(listed)
    good = {"A": np.ones((2, 3)), "B": np.ones((3, 4)), "dC": np.ones((2, 4))}
    return cases + [Case({**good, **changes}, label=label) for label, changes in
                    mismatched_inputs(good, {"A": "MK", "B": "KN", "dC": "MN"},
                                      listed=[c.inputs for c in cases])]


def _bad_products() -> list[tuple[str, Shape, Shape, Shape | None]]:
    return [
        ("A has ndim 1", (3,), (3, 2), (2,)),
        ("B has ndim 1", (2, 3), (3,), (2,)),
        ("A (4, 2, 3) and B (4, 4, 2): inner sizes differ", (4, 2, 3), (4, 4, 2), (4, 2, 2)),
        ("batch dims (2,) and (3,) do not broadcast", (2, 2, 3), (3, 3, 4), (2, 2, 4)),
        ("batch dims (2, 3) and (3, 2) do not broadcast", (2, 3, 2, 3), (3, 2, 3, 4),
         (2, 3, 2, 4)),
    ]


def malformed_batched(rng: np.random.Generator) -> list[Case]:
    return _malformed([*_bad_products(),
                       ("dC lacks the batch dims", (4, 2, 3), (3, 5), (2, 5)),
                       ("dC has A's batch (3, 1), not the broadcast (3, 4)", (3, 1, 2, 3),
                        (4, 3, 5), (3, 1, 2, 5)),
                       ("dC is (S, N, M), not (S, M, N)", (4, 2, 3), (4, 3, 5), (4, 5, 2))])


def malformed_product(rng: np.random.Generator) -> list[Case]:
    return _malformed([(label, a, b, None) for label, a, b, _ in _bad_products()])


# --- the known mistakes -------------------------------------------------------------------------
#
# Each matcher looks at one gradient: a candidate with a slip in dA and another in dB is told
# about the first, then the second.

Formula = Callable[[np.ndarray, np.ndarray, np.ndarray], np.ndarray]


def _T(x: np.ndarray) -> np.ndarray:
    return np.swapaxes(x, -1, -2)


def _same(actual: Any, expected: np.ndarray, case: Case) -> bool:
    return isinstance(actual, np.ndarray) and matches(actual, expected, case.dtype)


def _is_slip(case: Case, actual: dict[str, Any], name: str, wrong: np.ndarray) -> bool:
    """The gradient `name` equals `wrong`, which differs from the right one on this case (at
    1 x 1 a missing transpose is no mistake)."""
    return _same(actual[name], wrong, case) and not _same(wrong, gradients(case)[name], case)


def _slip(case: Case, actual: dict[str, Any], name: str, formula: Formula) -> bool:
    """The gradient `name` equals a wrong formula, reduced to its input's shape."""
    A, B, dC = _f64(case)
    shape = (A if name == "dA" else B).shape
    full = formula(A, B, dC)
    return full.shape[-2:] == shape[-2:] and _is_slip(case, actual, name, sum_to(full, shape))


def da_not_transposed(case: Case, actual: dict[str, Any]) -> bool:
    return _slip(case, actual, "dA", lambda A, B, dC: dC @ B)


def da_wrong_order(case: Case, actual: dict[str, Any]) -> bool:
    return _slip(case, actual, "dA", lambda A, B, dC: _T(B) @ dC)


def db_not_transposed(case: Case, actual: dict[str, Any]) -> bool:
    return _slip(case, actual, "dB", lambda A, B, dC: A @ dC)


def db_wrong_order(case: Case, actual: dict[str, Any]) -> bool:
    return _slip(case, actual, "dB", lambda A, B, dC: dC @ _T(A))


def _transposed(case: Case, actual: dict[str, Any], name: str) -> bool:
    return _is_slip(case, actual, name, _T(gradients(case)[name]))


def da_transposed(case: Case, actual: dict[str, Any]) -> bool:
    return _transposed(case, actual, "dA")


def db_transposed(case: Case, actual: dict[str, Any]) -> bool:
    return _transposed(case, actual, "dB")


def swapped_outputs(case: Case, actual: dict[str, Any]) -> bool:
    truth = gradients(case)
    return _is_slip(case, actual, "dA", truth["dB"]) and _is_slip(case, actual, "dB", truth["dA"])


def _full(case: Case, name: str) -> tuple[np.ndarray, Shape]:
    """The gradient `name` before any reduction (the broadcast batch shape), and its input's
    shape."""
    A, B, dC = _f64(case)
    if name == "dA":
        return dC @ _T(B), A.shape
    return _T(A) @ dC, B.shape


def _axes_needed(full: np.ndarray, shape: Shape) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """(the leading axes the input lacks, the axes where it has size 1 and the batch does
    not), as axes of the full gradient."""
    lead = full.ndim - len(shape)
    ones = tuple(lead + i for i, size in enumerate(shape[:-2]) if size == 1
                 and full.shape[lead + i] != 1)
    return tuple(range(lead)), ones


def _reduction_slip(case: Case, actual: dict[str, Any],
                    slip: Callable[[np.ndarray, Shape], list[np.ndarray]]) -> bool:
    """Either gradient equals one of the wrong reductions `slip` makes of the full gradient."""
    return any(_is_slip(case, actual, name, wrong) for name in ("dA", "dB")
               for wrong in slip(*_full(case, name)))


def everything_summed(case: Case, actual: dict[str, Any]) -> bool:
    """A gradient summed down to one number, as torch's x.sum(dim=()) does."""
    for name in ("dA", "dB"):
        full, shape = _full(case, name)
        found = actual[name]
        if isinstance(found, np.ndarray) and found.size == 1 < full.size and matches(
                found.reshape(()), np.asarray(full.sum()), case.dtype):
            return True
    return False


def no_reduction(case: Case, actual: dict[str, Any]) -> bool:
    return _reduction_slip(case, actual, lambda full, shape: [full])


def size_one_not_reduced(case: Case, actual: dict[str, Any]) -> bool:
    def slip(full: np.ndarray, shape: Shape) -> list[np.ndarray]:
        lead, _ = _axes_needed(full, shape)
        return [full.sum(axis=lead)]

    return _reduction_slip(case, actual, slip)


def keepdims_leading(case: Case, actual: dict[str, Any]) -> bool:
    def slip(full: np.ndarray, shape: Shape) -> list[np.ndarray]:
        lead, ones = _axes_needed(full, shape)
        return [full.sum(axis=lead + ones, keepdims=True)]

    return _reduction_slip(case, actual, slip)


def size_one_dropped(case: Case, actual: dict[str, Any]) -> bool:
    def slip(full: np.ndarray, shape: Shape) -> list[np.ndarray]:
        lead, ones = _axes_needed(full, shape)
        return [full.sum(axis=lead + ones)]

    return _reduction_slip(case, actual, slip)


def wrong_axes(case: Case, actual: dict[str, Any]) -> bool:
    """Any other non-empty set of batch axes summed, with or without keepdims."""
    def slip(full: np.ndarray, shape: Shape) -> list[np.ndarray]:
        batch = range(full.ndim - 2)
        subsets = itertools.chain.from_iterable(
            itertools.combinations(batch, r) for r in range(1, full.ndim - 1))
        return [full.sum(axis=axes, keepdims=keep) for axes in subsets for keep in (False, True)]

    return _reduction_slip(case, actual, slip)


# --- special judges -----------------------------------------------------------------------------




SAVED_LABELS = {"A": "A itself", "B": "B itself", "A copy": "a copy of A",
                "B copy": "a copy of B", "output": "the output C"}


def saves_inputs(ctx: Context, params: dict[str, str]) -> Plan:
    """What setup_context saved, seen by saved-tensor hooks: A and B, not C."""
    case = one_broadcast(ctx.rng())

    def judge(obs: dict[str, Any]) -> Verdict:
        if obs["raised"]:
            return raised_verdict(case.describe(), obs["raised"])
        saved = obs["saved"]
        shown = ", ".join(SAVED_LABELS.get(s, s) for s in saved) or "nothing"
        summary = f"ctx.save_for_backward saved {shown}"
        if "output" in saved:
            return failed(summary, hint=params["output_hint"])
        missing = [name for name in ("A", "B") if name not in saved
                   and f"{name} copy" not in saved]
        if missing and obs["stashed"]:
            return failed(f"{summary}; tensors kept as ctx attributes instead: "
                          f"{', '.join('ctx.' + n for n in obs['stashed'])}",
                          hint=params["stashed_hint"])
        if missing:
            return failed(f"{summary}: {' and '.join(missing)} missing",
                          hint=params["missing_hint"])
        return passed(summary)

    return Plan("round:saved_tensors", {"case": case.data()}, judge)




def one_gradient_flops(case: Case) -> int:
    """One gradient's matmul: 2 x batch x M x K x N multiply-adds."""
    batch = int(np.prod(case["dC"].shape[:-2]))
    return 2 * batch * case.dim("M") * case.dim("K") * case.dim("N")


def second_derivatives(case: Case) -> dict[str, np.ndarray]:
    """Of L2 = sum(dA * vA) + sum(dB * vB) + sum(C * W) with dA, dB the first-order gradients
    of sum(C * dC): w.r.t. A, B and dC."""
    A, B, dC = _f64(case)
    vA, vB, W = (case.extra[n] for n in ("vA", "vB", "W"))
    first = backward(A, B, W)
    return {"dL2/dA": backward(A, vB, dC)[0] + first[0],
            "dL2/dB": backward(vA, B, dC)[1] + first[1], "dL2/d(dC)": vA @ B + A @ vB}


def double_backward(ctx: Context, params: dict[str, str]) -> Plan:
    """Differentiate the first-order gradients again: right, or torch's refusal."""
    rng = ctx.rng()
    base = one_broadcast(rng)
    extra = {"vA": rng.standard_normal(base["A"].shape), "vB": rng.standard_normal(
        base["B"].shape), "W": rng.standard_normal(base["dC"].shape)}
    case = Case(base.inputs, base.dims, base.dtype, base.label, extra)

    def judge(obs: dict[str, Any]) -> Verdict:
        where = f"{case.describe()}, L2 = sum(dA * vA) + sum(dB * vB) + sum(C * W)"
        raised = obs["raised"]
        # Torch's refusal, where it comes: at the double backward, after a forward and a
        # first backward that ran (the words anywhere else are no refusal).
        if raised and obs["stage"] == "double backward" \
                and "once_differentiable" in raised["message"] \
                and "RuntimeError" in raised["bases"]:
            return passed("a double backward raised torch's once_differentiable error")
        if raised:
            return failed(f"{where}: the {obs['stage']} raised {format_raised(raised)}",
                          hint=params["raised_hint"])
        difference = tree_difference(obs["value"], second_derivatives(case), "float64",
                                     "the second derivatives")
        if difference:
            return failed(f"{where}: a double backward ran and gave a wrong answer: "
                          f"{difference}", hint=params["wrong_hint"])
        return passed("a double backward through your Function gives the right second "
                      "derivatives")

    return Plan("round:double_backward", {"case": case.data()}, judge)


# --- the interviewer's follow-ups ----------------------------------------------------------------
#
# Each demonstration runs on fixed inputs (seed 0), so the judge can rebuild them.

FOLLOWUP_SHAPES = {"part1": ((8, 16), (16, 4)), "part2": ((64, 4, 8), (8, 8)),
                   "part3": BROADCAST}
FLOAT64_BYTES = 8


@cache
def followup_case(part_id: str) -> Case:
    return make_case(np.random.default_rng(0), *FOLLOWUP_SHAPES[part_id])


def followup_args(part_id: str) -> Callable[[int], dict[str, Any]]:
    return lambda seed: {"case": followup_case(part_id).data()}


followup_part1_args = followup_args("part1")
followup_part2_args = followup_args("part2")
followup_part3_args = followup_args("part3")


def interpret_part1(data: dict[str, Any]) -> dict[str, Any]:
    """The backward's matmul flops against the forward's 2MKN."""
    from grader.round_api.judge import unavailable

    if data["raised"]:
        return unavailable(data["raised"]["message"])
    (m, k), (_, n) = FOLLOWUP_SHAPES["part1"]
    forward = 2 * m * k * n
    values: dict[str, Any] = {"m": m, "k": k, "n": n, "forward": forward}
    if data["flops"]:
        values.update(backward=data["flops"], ratio=f"{data['flops'] / forward:g}")
    return {"status": "measured", "values": values}


def interpret_part2(data: dict[str, Any]) -> dict[str, Any]:
    """Whether the candidate's backward held an unreduced (S, K, N) dB at its peak."""
    from grader.round_api.judge import unavailable

    if data["raised"]:
        return unavailable(data["raised"]["message"])
    (s, m, k), (_, n) = FOLLOWUP_SHAPES["part2"]
    outputs = (s * m * k + k * n) * FLOAT64_BYTES
    unreduced = s * k * n * FLOAT64_BYTES
    values = {"s": s, "m": m, "k": k, "n": n, "extra": data["extra"], "outputs": outputs,
              "unreduced": unreduced}
    piece = "materialised" if data["extra"] >= outputs + unreduced else "folded"
    return {"status": "measured", "values": values, "answer": ["answer", piece, "fold"]}


def interpret_part3(data: dict[str, Any]) -> dict[str, Any]:
    """A modified in place between forward and backward: caught by the version counter,
    silently wrong (the Function kept A itself outside save_for_backward), or right (it kept
    a copy). What raised is shown with the interviewer's snippet."""
    from grader.round_api.judge import followups, unavailable

    if data["stage"] != "backward":
        return unavailable(data["raised"]["message"] if data["raised"] else "no result")
    raised = data["raised"]
    if raised:
        piece = "caught" if explain_error(ROUND, raised["message"]) else "raised"
        snippet = followups(ROUND)["part3"].text("snippet")
        shown = [{"title": "The interviewer runs your Function", "snippet": snippet,
                  "raised": raised, "line": raised["where"]}]
        return {"status": "demonstrated", "answer": [piece, "answer"], "shown": shown}
    right = matches(np.asarray(data["dB"]), gradients(followup_case("part3"))["dB"], "float64")
    return {"status": "demonstrated", "answer": ["copied" if right else "silent", "answer"]}
