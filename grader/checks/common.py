"""Building blocks shared by the parts' checks: probes that call a function over cases, and
judges that compare what came back against the truth and name the mistake."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from grader.checks.api import Api
from grader.checks.base import Plan, Verdict, failed, passed
from grader.checks.cases import Case, bad_shapes
from grader.checks.compare import find_mismatch
from grader.checks.mistakes import Mistake, diagnose

Observation = dict[str, Any]
ArgsFor = Callable[[Api, Case], tuple[Any, ...]]
Read = Callable[[Api, tuple[Any, ...], Any], np.ndarray]


def format_raised(raised: dict[str, Any]) -> str:
    where = f"\n  at {raised['where']}" if raised.get("where") else ""
    return f"{raised['type']}: {raised['message']}{where}"


def raised_verdict(where: str, raised: dict[str, Any], hint: str | None = None) -> Verdict:
    """The verdict for candidate code that raised where it should have returned."""
    return failed(f"{where}: raised {format_raised(raised)}", hint=hint)


def read_return(api: Api, args: tuple[Any, ...], value: Any) -> np.ndarray:
    """The usual reading of a call: its return value."""
    return api.backend.to_numpy(value)


def call_each(api: Api, fn: Callable[..., Any], cases: list[Case], args_for: ArgsFor,
              read: Read = read_return) -> list[Observation]:
    """Call fn on each case until the first exception; plain data for each call."""
    observed: list[Observation] = []
    for case in cases:
        args = args_for(api, case)
        value, raised = api.call(fn, *args)
        if raised is not None:
            observed.append({"value": None, "raised": raised.as_dict()})
            break
        observed.append({"value": read(api, args, value), "raised": None})
    return observed


def reproduce(seed: int, part: str) -> str:
    return f"reproduce with `grader check {part} --seed {seed}`"


def _wrong_outputs(cases: list[Case], observed: list[Observation],
                   expected: Callable[[Case], np.ndarray]) -> list[tuple[Case, np.ndarray]]:
    """Every (case, output) that came back with the right shape but wrong values."""
    wrong = []
    for case, obs in zip(cases, observed, strict=False):
        if obs["raised"] is not None:
            break
        actual, truth = obs["value"], expected(case)
        if actual.shape == truth.shape and find_mismatch(actual, truth, case.dtype):
            wrong.append((case, actual))
    return wrong


def judge_cases(
    cases: list[Case],
    observed: list[Observation],
    expected: Callable[[Case], np.ndarray],
    name: str,
    mistakes: tuple[Mistake, ...],
    seed: int,
    part: str,
    generic_hint: str,
) -> Verdict:
    """Pass when every case matches the truth; else the first bad case's evidence, and the hint
    of the known mistake that explains the wrong outputs."""
    for case, obs in zip(cases, observed, strict=False):
        if obs["raised"] is not None:
            return failed(f"{case.describe()}: raised {format_raised(obs['raised'])}",
                          hint="Valid input must not raise; " + generic_hint)
        actual, truth = obs["value"], expected(case)
        if actual.shape != truth.shape:
            return failed(
                f"{case.describe()}: returned shape {tuple(actual.shape)}, expected "
                f"{tuple(truth.shape)} ({reproduce(seed, part)})",
                hint="The result has one (D, D) matrix per input matrix: shape (N, D, D).",
            )
        mismatch = find_mismatch(actual, truth, case.dtype)
        if mismatch is not None:
            wrong = _wrong_outputs(cases, observed, expected)
            return failed(
                f"{case.describe()}: {mismatch.describe(name)} ({reproduce(seed, part)})",
                hint=diagnose(wrong, mistakes) or generic_hint,
            )
    return passed(f"{len(cases)} cases matched (N from {min(c.n for c in cases)} to "
                  f"{max(c.n for c in cases)}, D from {min(c.d for c in cases)} to "
                  f"{max(c.d for c in cases)}, float64 and float32)")


VALIDATION_HINT = (
    "Check shapes first and raise ValueError yourself; an IndexError or a matmul RuntimeError "
    "from deeper in the code is an accident, not validation."
)


def validation_plan(function: str, arity: int, shape_count: int | None = None) -> Plan:
    """Malformed shapes must raise ValueError (arity 2: the second argument is P or dP)."""
    triples = bad_shapes()[:shape_count]

    def probe(api: Api) -> list[Observation]:
        fn = api.function(function)
        rows: list[Observation] = []
        for description, w_shape, other_shape in triples:
            args = [api.backend.native(np.ones(w_shape))]
            if arity == 2:
                args.append(api.backend.native(np.ones(other_shape)))
            _, raised = api.call(fn, *args)
            rows.append({"case": description, "raised": raised.as_dict() if raised else None})
        return rows

    def judge(rows: list[Observation]) -> Verdict:
        for row in rows:
            raised = row["raised"]
            if raised is None:
                return failed(f"{row['case']}: returned normally; expected ValueError",
                              hint=VALIDATION_HINT)
            if "ValueError" not in raised["bases"]:
                return failed(f"{row['case']}: raised {format_raised(raised)}; expected "
                              "ValueError", hint=VALIDATION_HINT)
        return passed(f"ValueError for all {len(rows)} malformed inputs")

    return Plan(probe, judge)


def unchanged(before: np.ndarray, after: np.ndarray) -> bool:
    """Bit-for-bit equality, NaN included."""
    return before.shape == after.shape and bool(np.array_equal(before, after, equal_nan=True))


def snapshot(api: Api, x: Any) -> np.ndarray:
    return api.backend.to_numpy(x, "the input")


RunOnInputs = Callable[[Api, dict[str, Any]], Any]


def inputs_unchanged_plan(case: Case, run: RunOnInputs, hint: str) -> Plan:
    """Run candidate code on native copies of case.W and case.dP (`run` returns what it raised,
    or None); pass when neither was modified."""

    def probe(api: Api) -> Observation:
        inputs = {"W": api.backend.native(case.W), "dP": api.backend.native(case.dP)}
        raised = run(api, inputs)
        return {"raised": raised.as_dict() if raised else None,
                "after": {name: snapshot(api, x) for name, x in inputs.items()}}

    def judge(obs: Observation) -> Verdict:
        if obs["raised"]:
            return raised_verdict(case.describe(), obs["raised"])
        before = {"W": case.W, "dP": case.dP}
        changed = [n for n, after in obs["after"].items() if not unchanged(before[n], after)]
        if changed:
            return failed(f"{case.describe()}: {' and '.join(changed)} modified", hint=hint)
        return passed()

    return Plan(probe, judge)
