"""Part 2 checks: the out-of-place forward `prefix_products(W)`, and autograd through it."""

from __future__ import annotations

from typing import Any

import numpy as np

from grader.checks import truth
from grader.checks.api import Api
from grader.checks.autograd import (
    bound_gradcheck,
    explain_autograd_error,
    first_line,
    gradient_through,
    run_gradcheck,
)
from grader.checks.base import Context, Plan, Verdict, check, failed, passed
from grader.checks.cases import Case, make_case, make_cases
from grader.checks.common import (
    Observation,
    call_each,
    format_raised,
    judge_cases,
    raised_verdict,
    snapshot,
    unchanged,
    validation_plan,
)
from grader.checks.compare import find_mismatch
from grader.checks.mistakes import FORWARD_MISTAKES

FUNCTION = "prefix_products"
GENERIC_HINT = "P[0] = W[0], then P[i] = P[i-1] @ W[i], returned as a new array."


def _native_w(api: Api, case: Case) -> tuple[Any, ...]:
    return (api.backend.native(case.W),)


@check("part2.validation", "Raises ValueError for a malformed W", 1)
def validation(ctx: Context) -> Plan:
    return validation_plan(FUNCTION, arity=1, shape_count=3)


@check("part2.correctness", "Returns the right products over many shapes and dtypes", 4)
def correctness(ctx: Context) -> Plan:
    cases = make_cases(ctx.rng())

    def probe(api: Api) -> list[Observation]:
        return call_each(api, api.function(FUNCTION), cases, _native_w)

    def judge(observed: list[Observation]) -> Verdict:
        return judge_cases(cases, observed, lambda c: truth.forward(c.W), "P", FORWARD_MISTAKES,
                           ctx.seed, "part2", GENERIC_HINT)

    return Plan(probe, judge)


@check("part2.empty", "N = 0 returns an empty (0, D, D) result", 1)
def empty(ctx: Context) -> Plan:
    def probe(api: Api) -> Observation:
        value, raised = api.call(api.function(FUNCTION), api.backend.native(np.zeros((0, 3, 3))))
        if raised:
            return {"raised": raised.as_dict()}
        return {"raised": None, "shape": list(api.backend.to_numpy(value).shape)}

    def judge(obs: Observation) -> Verdict:
        if obs["raised"]:
            return failed(f"W of shape (0, 3, 3) raised {format_raised(obs['raised'])}",
                          hint="With N == 0 there are no products: return an empty (0, D, D) "
                          "result (np.empty_like(W) / W.clone()) before touching W[0].")
        if obs["shape"] != [0, 3, 3]:
            return failed(f"W of shape (0, 3, 3) gave shape {tuple(obs['shape'])}")
        return passed()

    return Plan(probe, judge)


@check("part2.fresh_result", "Returns new memory and leaves W unchanged", 2)
def fresh_result(ctx: Context) -> Plan:
    case = make_case(ctx.rng(), 6, 3)

    def probe(api: Api) -> Observation:
        W = api.backend.native(case.W)
        value, raised = api.call(api.function(FUNCTION), W)
        if raised:
            return {"raised": raised.as_dict()}
        api.backend.to_numpy(value)
        return {"raised": None, "is_w": value is W,
                "shares": api.backend.shares_memory(value, W), "W": snapshot(api, W)}

    def judge(obs: Observation) -> Verdict:
        if obs["raised"]:
            return raised_verdict(case.describe(), obs['raised'])
        if obs["is_w"] or obs["shares"]:
            return failed(f"{case.describe()}: the result shares memory with W",
                          hint="Out-of-place means a new buffer: allocate P (np.empty_like, "
                          "torch.stack of new products), never return W or a view of it.")
        if not unchanged(case.W, obs["W"]):
            return failed(f"{case.describe()}: W was modified", hint="Read W, never write it.")
        return passed()

    return Plan(probe, judge)


@check("part2.dtype_device", "Keeps W's dtype and device", 1)
def dtype_device(ctx: Context) -> Plan:
    cases = [make_case(ctx.rng(), 4, 3, dtype) for dtype in ("float32", "float64")]

    def probe(api: Api) -> list[Observation]:
        rows = []
        for case in cases:
            W = api.backend.native(case.W)
            value, raised = api.call(api.function(FUNCTION), W)
            if raised:
                return [{"raised": raised.as_dict()}]
            api.backend.to_numpy(value)
            rows.append({"raised": None,
                         "got": [api.backend.dtype_name(value), api.backend.device_name(value)],
                         "want": [api.backend.dtype_name(W), api.backend.device_name(W)]})
        return rows

    def judge(rows: list[Observation]) -> Verdict:
        for row in rows:
            if row["raised"]:
                return failed(f"raised {format_raised(row['raised'])}")
            if row["got"] != row["want"]:
                return failed(f"W was {' on '.join(row['want'])}; the result is "
                              f"{' on '.join(row['got'])}",
                              hint="Allocate like W (empty_like, or products of W itself) so "
                              "dtype and device follow the input.")
        return passed()

    return Plan(probe, judge)


def _judge_gradient(case: Case, obs: Observation) -> Verdict:
    """Verdict on autograd through the candidate's forward (see gradient_through)."""
    stage = obs["stage"]
    if stage in ("forward", "backward"):
        raised = obs["raised"]
        known = explain_autograd_error(raised["message"])
        text = f"{case.describe()}, W.requires_grad: {stage} raised {raised['type']}: " \
            f"{first_line(raised['message'])}"
        if known:
            return failed(f"{text}\n{known[0]}", hint=known[1])
        where = f"\n  at {raised['where']}" if raised["where"] else ""
        return failed(text + where)
    if stage in ("detached", "no_grad"):
        what, fix = explain_autograd_error("does not require grad and does not have a grad_fn") \
            or ("", "")
        return failed(f"{case.describe()}: W.grad stayed empty: {what}", hint=fix)
    expected = truth.backward(case.W, case.dP)
    mismatch = find_mismatch(obs["grad"], expected, case.dtype)
    if mismatch:
        return failed(f"{case.describe()}: autograd's dW through your forward is wrong: "
                      f"{mismatch.describe('W.grad')}",
                      hint="If the forward values are right but the gradient is not, part of "
                      "the computation went around autograd (.data, detach, numpy).")
    return passed("W.grad matches the reference gradient")


@check("part2.autograd", "Autograd flows from P back to W with the right gradient", 4,
       flavors=("torch",))
def autograd(ctx: Context) -> Plan:
    case = make_case(ctx.rng(), 6, 3)

    def probe(api: Api) -> Observation:
        return gradient_through(api, api.function(FUNCTION), case.W, case.dP)

    return Plan(probe, lambda obs: _judge_gradient(case, obs))


@check("part2.gradcheck", "torch.autograd.gradcheck passes in float64", 2, flavors=("torch",))
def gradcheck(ctx: Context) -> Plan:
    real_gradcheck = bound_gradcheck()
    case = make_case(ctx.rng(), 4, 3)

    def probe(api: Api) -> Observation:
        fn = api.function(FUNCTION)
        return {"gradcheck": run_gradcheck(api, real_gradcheck, fn, case.W),
                "gradient": gradient_through(api, fn, case.W, case.dP)}

    def judge(obs: Observation) -> Verdict:
        result = obs["gradcheck"]
        if not result["ok"]:
            message = result["raised"]["message"]
            known = explain_autograd_error(message)
            return failed(f"{case.describe()}: gradcheck raised {result['raised']['type']}: "
                          f"{first_line(message)}",
                          hint=known[1] if known else "gradcheck compares autograd's Jacobian "
                          "with finite differences: the two disagree, so part of your forward "
                          "is invisible to autograd.")
        return _judge_gradient(case, obs["gradient"])

    return Plan(probe, judge)
