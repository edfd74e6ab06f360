"""Part 3 checks: the hand-written backward `prefix_products_backward(W, dP)`."""

from __future__ import annotations

from typing import Any

from grader.checks import truth
from grader.checks.api import Api
from grader.checks.autograd import (
    bound_gradcheck,
    count_autograd_runs,
    custom_function,
    first_line,
    run_gradcheck,
)
from grader.checks.base import Context, Plan, Verdict, check, failed, passed, skipped
from grader.checks.cases import Case, make_case, make_cases
from grader.checks.common import (
    Observation,
    call_each,
    inputs_unchanged_plan,
    judge_cases,
    raised_verdict,
    validation_plan,
)
from grader.checks.compare import find_mismatch
from grader.checks.mistakes import BACKWARD_MISTAKES, Mistake, diagnose
from grader.parts import PART2
from grader.references import load_reference_part

FUNCTION = "prefix_products_backward"
GENERIC_HINT = (
    "Sweep i from N-1 down to 0: adj += dP[i]; dW[i] = P[i-1]^T @ adj (identity at i = 0); "
    "adj = adj @ W[i]^T."
)
FD_TOLERANCE = (1e-5, 1e-6)  # (rtol, atol) for central differences with eps = 1e-6


def _native_w_dp(api: Api, case: Case) -> tuple[Any, ...]:
    return api.backend.native(case.W), api.backend.native(case.dP)


@check("part3.validation", "Raises ValueError for a malformed W or a dP of the wrong shape", 2)
def validation(ctx: Context) -> Plan:
    return validation_plan(FUNCTION, arity=2)


@check("part3.correctness", "Matches the reference dW over many shapes and dtypes", 9)
def correctness(ctx: Context) -> Plan:
    cases = make_cases(ctx.rng())

    def probe(api: Api) -> list[Observation]:
        return call_each(api, api.function(FUNCTION), cases, _native_w_dp)

    def judge(observed: list[Observation]) -> Verdict:
        return judge_cases(cases, observed, lambda c: truth.backward(c.W, c.dP), "dW",
                           BACKWARD_MISTAKES, ctx.seed, "part3", GENERIC_HINT)

    return Plan(probe, judge)


def finite_difference_plan(ctx: Context, gradient: Any, part: str,
                           mistakes: tuple[Mistake, ...]) -> Plan:
    """dW from the candidate against central differences of sum(P * dP), float64, eps 1e-6.

    `gradient(api, case)` returns the candidate's dW as numpy; the differences are taken here,
    in the worker, on the reference forward.
    """
    case = make_case(ctx.rng(), 5, 3)

    def probe(api: Api) -> Observation:
        return gradient(api, case)

    def judge(obs: Observation) -> Verdict:
        if obs["raised"]:
            return raised_verdict(case.describe(), obs['raised'])
        numeric = truth.finite_differences(case.W, case.dP)
        if obs["value"].shape != numeric.shape:
            return failed(f"{case.describe()}: dW has shape {obs['value'].shape}")
        mismatch = find_mismatch(obs["value"], numeric, "float64", FD_TOLERANCE)
        if mismatch:
            i = ", ".join(map(str, mismatch.index))
            return failed(
                f"{case.describe()}, loss sum(P * dP), eps 1e-6: dL/dW[{i}] by finite "
                f"differences is {mismatch.expected:.6g}, yours is {mismatch.yours:.6g} "
                f"(max abs error {mismatch.max_abs:.3g}; seed {ctx.seed})",
                hint=diagnose([(case, obs["value"])], mistakes) or "Finite differences do not lie: "
                "nudge that one entry of W by hand and watch the loss; then compare with your "
                f"formula. (`grader hint {part}`)")
        return passed(f"all {case.W.size} entries of dW agree with central differences")

    return Plan(probe, judge)


def _candidate_dw(api: Api, case: Case) -> Observation:
    return call_each(api, api.function(FUNCTION), [case], _native_w_dp)[0]


@check("part3.finite_differences", "dW agrees with central finite differences (float64)", 6)
def finite_differences(ctx: Context) -> Plan:
    return finite_difference_plan(ctx, _candidate_dw, "part3", BACKWARD_MISTAKES)


def gradcheck_plan(ctx: Context, make_fn: Any, dw: Any, mistakes: tuple[Mistake, ...]) -> Plan:
    """gradcheck of a custom Function built by make_fn(api) (in the child), plus the worker's
    own comparison of dw(api, case) with the truth, so a patched gradcheck proves nothing."""
    real_gradcheck = bound_gradcheck()
    case = make_case(ctx.rng(), 4, 3)

    def probe(api: Api) -> Observation:
        return {"gradcheck": run_gradcheck(api, real_gradcheck, make_fn(api), case.W),
                "dW": dw(api, case)}

    def judge(obs: Observation) -> Verdict:
        result, dW = obs["gradcheck"], obs["dW"]
        if not result["ok"]:
            raised = result["raised"]
            where = f"\n  at {raised['where']}" if raised["where"] else ""
            named = diagnose([(case, dW["value"])], mistakes) if dW["value"] is not None else None
            return failed(f"{case.describe()}: gradcheck raised {raised['type']}: "
                          f"{first_line(raised['message'])}{where}",
                          hint=named or "gradcheck compares your backward's Jacobian with "
                          "finite differences of the forward; 'Jacobian mismatch' means the "
                          "two disagree. The correctness check shows which entries.")
        if dW["raised"] or find_mismatch(dW["value"], truth.backward(case.W, case.dP),
                                         "float64"):
            return failed("gradcheck reported success, but your dW on the same input is wrong",
                          hint="See the correctness check for the evidence.")
        return passed("gradcheck passed (float64, slow mode)")

    return Plan(probe, judge)


@check("part3.gradcheck", "gradcheck passes for an autograd.Function using your backward", 6)
def gradcheck(ctx: Context) -> Plan:
    reference_forward = load_reference_part(PART2, "torch").prefix_products

    def make_fn(api: Api) -> Any:
        fn = api.function(FUNCTION)
        backend = api.backend
        return custom_function(
            api,
            lambda W: (reference_forward(W), None),
            lambda W, saved, dP: backend.to_tensor(
                fn(backend.from_tensor(W), backend.from_tensor(dP)), "dW"),
        )

    return gradcheck_plan(ctx, make_fn, _candidate_dw, BACKWARD_MISTAKES)


@check("part3.no_autograd", "Computes dW by hand: no autograd inside", 4)
def no_autograd(ctx: Context) -> Plan:
    case = make_case(ctx.rng(), 5, 3)

    def probe(api: Api) -> Observation:
        W, dP = _native_w_dp(api, case)
        _, raised, runs = count_autograd_runs(api, api.function(FUNCTION), W, dP)
        return {"raised": raised.as_dict() if raised else None, "runs": runs}

    def judge(obs: Observation) -> Verdict:
        if obs["runs"]:
            return failed(f"{case.describe()}: your backward ran torch autograd {obs['runs']} "
                          "time(s) (backward(), autograd.grad or torch.func)",
                          hint="Part 3 is the backward by hand: use only matmuls and "
                          "transposes of W, dP and the forward's prefixes.")
        if obs["raised"]:
            return raised_verdict(case.describe(), obs['raised'])
        return passed()

    return Plan(probe, judge)


@check("part3.inputs_unchanged", "Leaves W and dP unchanged", 2)
def inputs_unchanged(ctx: Context) -> Plan:
    def run(api: Api, inputs: dict[str, Any]) -> Any:
        return api.call(api.function(FUNCTION), inputs["W"], inputs["dP"])[1]

    return inputs_unchanged_plan(make_case(ctx.rng(), 6, 3), run,
                                 "Accumulate into your own adjoint (adj = adj + dP[i]); `+=` "
                                 "on a slice of dP writes into the caller's tensor.")


COMPLEXITY_SIZES = (16, 64)
COMPLEXITY_D = 4


@check("part3.complexity", "Costs O(N * D^3) matmul work, not O(N^2 * D^3)", 6)
def complexity(ctx: Context) -> Plan:
    rng = ctx.rng()
    cases = [make_case(rng, n, COMPLEXITY_D) for n in COMPLEXITY_SIZES]

    def probe(api: Api) -> Observation:
        fn = api.function(FUNCTION)
        flops = []
        for case in cases:
            _, count = api.backend.count_matmul_flops(fn, *_native_w_dp(api, case))
            flops.append(count)
        return {"flops": flops}

    def judge(obs: Observation) -> Verdict:
        small, large = obs["flops"]
        n_small, n_large = COMPLEXITY_SIZES
        if small == 0 or large == 0:
            return skipped("no matmul work was visible to the counter (were the inputs "
                           "converted, e.g. with np.asarray?), so the cost was not measured")
        growth = large / small
        budget = 4 * 3 * 2 * n_large * COMPLEXITY_D**3  # 4x the reference's 3 matmuls per step
        summary = (f"matmul flops: {small} at N={n_small}, {large} at N={n_large} "
                   f"(x{growth:.1f} for x{n_large // n_small} N)")
        if growth > 1.5 * n_large / n_small:
            return failed(summary + ": the cost grows faster than linearly in N",
                          hint="That is the closed form's O(N^2 * D^3): every dW[j] re-forms "
                          "suffix products. A running adjoint swept from N-1 down to 0 "
                          "reuses the work: two matmuls per step.")
        if large > budget:
            return failed(summary + f": more than 4x the reference's {budget // 4} flops",
                          hint="Each step needs two D x D matmuls (plus the forward's one).")
        return passed(summary)

    return Plan(probe, judge)
