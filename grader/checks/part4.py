"""Part 4 checks: the Hillis-Steele scan, `hillis_steele_scan_forward` and `..._backward`."""

from __future__ import annotations

from typing import Any

from grader.checks import truth
from grader.checks.api import Api
from grader.checks.autograd import custom_function
from grader.checks.backends import CandidateFault
from grader.checks.base import Context, Plan, Verdict, check, failed, passed
from grader.checks.cases import FORWARD_SHAPES, Case, make_case, make_cases
from grader.checks.common import (
    Observation,
    call_each,
    format_raised,
    inputs_unchanged_plan,
    judge_cases,
    validation_plan,
)
from grader.checks.mistakes import SCAN_BACKWARD_MISTAKES, SCAN_FORWARD_MISTAKES
from grader.checks.part3 import finite_difference_plan, gradcheck_plan

FORWARD = "hillis_steele_scan_forward"
BACKWARD = "hillis_steele_scan_backward"
FORWARD_HINT = ("step = 1, 2, 4, ... while step < N: new[step:] = old[:-step] @ old[step:], "
                "new[:step] = old[:step], reading only the previous level.")
BACKWARD_HINT = ("Walk the levels in reverse; for new[i] = old[i-step] @ old[i] with G = "
                 "grad[i]: old[i-step] gets G @ old[i]^T, old[i] gets old[i-step]^T @ G, "
                 "and i < step passes grad[i] through.")
LEVEL_SIZES = (1, 2, 3, 4, 5, 8, 9, 16, 17, 33)


def split_forward(api: Api, value: Any) -> tuple[Any, Any]:
    """(P, levels) from what the forward returned, or a clear fault."""
    if not isinstance(value, tuple | list) or len(value) != 2:
        raise CandidateFault(f"{FORWARD} should return the pair (P, levels); it returned a "
                             f"{type(value).__name__}")
    return value[0], value[1]


def _forward_p(api: Api, args: tuple[Any, ...], value: Any) -> Any:
    return api.backend.to_numpy(split_forward(api, value)[0], "P")


def _native_w(api: Api, case: Case) -> tuple[Any, ...]:
    return (api.backend.native(case.W),)


def _scan_gradient(api: Api, case: Case) -> Observation:
    """Forward then backward on one case; the forward's failure is reported as such."""
    W = api.backend.native(case.W)
    value, raised = api.call(api.function(FORWARD), W)
    if raised:
        return {"value": None, "raised": raised.as_dict(), "stage": "forward"}
    _, levels = split_forward(api, value)
    dW, raised = api.call(api.function(BACKWARD), levels, api.backend.native(case.dP))
    if raised:
        return {"value": None, "raised": raised.as_dict(), "stage": "backward"}
    return {"value": api.backend.to_numpy(dW, "dW"), "raised": None, "stage": "backward"}


@check("part4.validation", "Forward raises ValueError for a malformed W", 2)
def validation(ctx: Context) -> Plan:
    return validation_plan(FORWARD, arity=1, shape_count=3)


@check("part4.forward", "Forward equals the sequential products (N powers of two and not)", 7)
def forward(ctx: Context) -> Plan:
    cases = make_cases(ctx.rng(), FORWARD_SHAPES)

    def probe(api: Api) -> list[Observation]:
        return call_each(api, api.function(FORWARD), cases, _native_w, _forward_p)

    def judge(observed: list[Observation]) -> Verdict:
        return judge_cases(cases, observed, lambda c: truth.forward(c.W), "P",
                           SCAN_FORWARD_MISTAKES, ctx.seed, "part4", FORWARD_HINT)

    return Plan(probe, judge)


@check("part4.levels", "Forward takes ceil(log2 N) levels", 3)
def levels(ctx: Context) -> Plan:
    rng = ctx.rng()
    cases = [make_case(rng, n, 2) for n in LEVEL_SIZES]

    def probe(api: Api) -> list[Observation]:
        rows = []
        for case in cases:
            value, raised = api.call(api.function(FORWARD), api.backend.native(case.W))
            if raised:
                return rows + [{"n": case.n, "raised": raised.as_dict()}]
            found = split_forward(api, value)[1]
            try:
                count = len(found)
            except TypeError as exc:
                raise CandidateFault(f"levels should be a list, got {type(found).__name__}") \
                    from exc
            rows.append({"n": case.n, "raised": None, "levels": count})
        return rows

    def judge(rows: list[Observation]) -> Verdict:
        for row in rows:
            if row["raised"]:
                return failed(f"N={row['n']}: raised {format_raised(row['raised'])}")
            want = truth.expected_levels(row["n"])
            if row["levels"] != want:
                return failed(f"N={row['n']}: {row['levels']} levels, expected ceil(log2 N) = "
                              f"{want}",
                              hint="One entry per level, levels at step = 1, 2, 4, ... while "
                              "step < N: that is O(log N) depth, the point of the scan.")
        return passed(f"level counts right for N in {', '.join(map(str, LEVEL_SIZES))}")

    return Plan(probe, judge)


@check("part4.backward", "Backward equals the reference dW", 8)
def backward(ctx: Context) -> Plan:
    cases = make_cases(ctx.rng(), FORWARD_SHAPES)

    def probe(api: Api) -> list[Observation]:
        observed = []
        for case in cases:
            observed.append(_scan_gradient(api, case))
            if observed[-1]["raised"]:
                break
        return observed

    def judge(observed: list[Observation]) -> Verdict:
        verdict = judge_cases(cases, observed, lambda c: truth.backward(c.W, c.dP), "dW",
                              SCAN_BACKWARD_MISTAKES, ctx.seed, "part4", BACKWARD_HINT)
        if verdict.status == "failed" and observed[-1].get("stage") == "forward":
            return failed("the forward raised, so the backward could not run: "
                          + verdict.message, hint="Fix part4.forward first.")
        return verdict

    return Plan(probe, judge)


@check("part4.finite_differences", "Scan dW agrees with central finite differences", 4)
def finite_differences(ctx: Context) -> Plan:
    return finite_difference_plan(ctx, _scan_gradient, "part4", SCAN_BACKWARD_MISTAKES)


@check("part4.gradcheck", "gradcheck passes for an autograd.Function built on your scan", 4)
def gradcheck(ctx: Context) -> Plan:
    def make_fn(api: Api) -> Any:
        backend = api.backend
        fwd, bwd = api.function(FORWARD), api.function(BACKWARD)

        def forward(W: Any) -> tuple[Any, Any]:
            P, levels = split_forward(api, fwd(backend.from_tensor(W)))
            return backend.to_tensor(P, "P"), levels

        return custom_function(api, forward, lambda W, levels, dP: backend.to_tensor(
            bwd(levels, backend.from_tensor(dP)), "dW"))

    return gradcheck_plan(ctx, make_fn, _scan_gradient, SCAN_BACKWARD_MISTAKES)


@check("part4.inputs_unchanged", "Leaves W and dP unchanged", 2)
def inputs_unchanged(ctx: Context) -> Plan:
    def run(api: Api, inputs: dict[str, Any]) -> Any:
        value, raised = api.call(api.function(FORWARD), inputs["W"])
        if raised:
            return raised
        return api.call(api.function(BACKWARD), split_forward(api, value)[1], inputs["dP"])[1]

    return inputs_unchanged_plan(make_case(ctx.rng(), 7, 3), run,
                                 "Copy before the first level (cur = W.copy() / W.clone()) and "
                                 "start the backward from a copy of dP.")



TIMING_SIZES = {"cuda": (4096, 32), "cpu": (512, 32)}
TIMING_BUDGET_S = {"cuda": 0.5, "cpu": 0.2}  # repeats per figure, after its warm-up
TIMING_SHARE = 0.6  # of the check's timeout: every figure, once the device is set up
CALL_LIMIT_SHARE = 0.1  # of the check's timeout: the most one warm-up call may take
SPEED_LIMIT = 3.0  # the candidate's scan may take up to 3x the reference scan's time
SCAN_FIGURES = ("your scan forward", "your scan backward")
REFERENCE_FIGURES = ("reference scan forward", "reference scan backward")
SEQUENTIAL_FIGURES = ("reference sequential forward", "your sequential forward")


def resolve_device(requested: str, flavor: str) -> tuple[str, str | None]:
    """(device to time on, why it is not CUDA). Asked in the child: CUDA must not be
    initialised in the worker, or no forked child could use it."""
    import torch

    if flavor == "numpy":
        return "cpu", "the numpy flavor runs on the CPU"
    if requested == "cpu":
        return "cpu", "--device cpu"
    if not torch.cuda.is_available():
        return "cpu", "--device cuda, but no CUDA device here" if requested == "cuda" \
            else "no CUDA device"
    try:
        torch.cuda.init()
    except RuntimeError as exc:  # e.g. CUDA was initialised before the fork: never a false fail
        return "cpu", f"CUDA unusable in the grading process ({exc})"
    return "cuda", None


@check("part4.timing", "Scan within 3x of the reference scan's time (graded on CUDA)", 3)
def timing(ctx: Context) -> Plan:
    import time

    import numpy as np

    from grader.checks.cases import well_scaled
    from grader.parts import PART2, PART4
    from grader.references import load_reference_part
    from grader.timing import (
        CudaStopwatch,
        Stopwatch,
        measure,
        scan_flops,
        steady_host_allocator,
    )

    reference = load_reference_part(PART4, "torch")
    reference_sequential = load_reference_part(PART2, "torch").prefix_products
    rng = ctx.rng()
    budget_s = TIMING_SHARE * ctx.timeout_s

    def probe(api: Api) -> Observation:
        import torch

        device, why_not_cuda = resolve_device(ctx.device, api.flavor)
        n, d = TIMING_SIZES[device]
        W_np = well_scaled(rng, n, d).astype(np.float32)
        dP_np = rng.standard_normal((n, d, d)).astype(np.float32)
        W_ref, dP_ref = (torch.from_numpy(a).to(device) for a in (W_np, dP_np))
        W_c, dP_c = (api.backend.native(a) for a in (W_np, dP_np))
        if api.flavor == "torch":
            W_c, dP_c = W_c.to(device), dP_c.to(device)
        if device == "cuda":
            stopwatch: Stopwatch = CudaStopwatch(torch)
        else:
            steady_host_allocator()
            stopwatch = Stopwatch()
        fwd, bwd = api.function(FORWARD), api.function(BACKWARD)
        ref_fwd = reference.hillis_steele_scan_forward
        ref_bwd = reference.hillis_steele_scan_backward
        # Set the device up untimed (CUDA context, cuBLAS handles, kernels) on the reference, so
        # that neither the budget nor the first figure pays for it.
        ref_levels = ref_fwd(W_ref)[1]
        ref_bwd(ref_levels, dP_ref)
        stopwatch.sync()
        deadline = time.perf_counter() + budget_s
        figures: dict[str, Any] = {}
        untimed: list[str] = []
        returned: dict[str, str] = {}  # the device each of your results came back on

        def timed(name: str, fn: Any) -> None:
            if time.perf_counter() >= deadline:
                untimed.append(name)
                return
            figures[name] = measure(fn, stopwatch, budget_s=TIMING_BUDGET_S[device],
                                    call_limit_s=CALL_LIMIT_SHARE * ctx.timeout_s,
                                    deadline=deadline).as_dict()

        def run_all() -> None:
            timed("reference scan forward", lambda: ref_fwd(W_ref))
            timed("reference scan backward", lambda: ref_bwd(ref_levels, dP_ref))
            P, levels = split_forward(api, fwd(W_c))
            returned["P"] = _device_of(P)
            timed("your scan forward", lambda: fwd(W_c))
            returned["dW"] = _device_of(bwd(levels, dP_c))
            timed("your scan backward", lambda: bwd(levels, dP_c))
            timed("reference sequential forward", lambda: reference_sequential(W_ref))
            sequential = _candidate_sequential()
            if sequential is not None:
                try:
                    timed("your sequential forward", lambda: sequential(W_c))
                except Exception:  # noqa: BLE001 - an unfinished or slow part 2 only loses a figure
                    pass

        _, raised = api.call(run_all)
        return {"device": device, "why_not_cuda": why_not_cuda, "n": n, "d": d,
                "device_name": torch.cuda.get_device_name() if device == "cuda" else "CPU",
                "figures": figures, "untimed": untimed, "budget_s": budget_s,
                "returned": returned,
                "raised": raised.as_dict() if raised else None, "flops": scan_flops(n, d)}

    return Plan(probe, judge_timing, uses_device=True)


def _device_of(value: Any) -> str:
    return str(getattr(value, "device", "cpu"))


def _candidate_sequential() -> Any:
    """The candidate's Part 2 forward, if their workspace has one that imports."""
    try:
        from exercises.part2_out_of_place import prefix_products  # type: ignore[import-not-found]
    except Exception:  # noqa: BLE001 - Part 2 may be unfinished or broken
        return None
    return prefix_products


def _figure_lines(obs: Observation) -> list[str]:
    figures = obs["figures"]
    lines = [f"{obs['device_name']} ({obs['device']}), N={obs['n']}, D={obs['d']}, float32"]
    for name in (*SCAN_FIGURES, *REFERENCE_FIGURES, *SEQUENTIAL_FIGURES):
        stats = figures.get(name)
        if stats is None:
            continue
        rate = ""
        if "scan forward" in name:
            rate = f"   {obs['flops'] / stats['median'] / 1e9:.1f} GFLOP/s"
        spread = (stats["q3"] - stats["q1"]) / stats["median"] * 50 if stats["median"] else 0
        lines.append(f"  {name:<30} {stats['median'] * 1e3:9.3f} ms  ±{spread:.0f}% "
                     f"(n={stats['repeats']}){rate}")
    seq = figures.get("your sequential forward") or figures.get("reference sequential forward")
    scan = figures.get("your scan forward")
    if seq and scan:
        lines.append(f"  scan speedup over sequential forward: "
                     f"{seq['median'] / scan['median']:.2f}x")
    if obs.get("untimed"):
        lines.append(f"  not timed (the {obs['budget_s']:g} s timing budget ran out): "
                     + ", ".join(obs["untimed"]))
    return lines


SLOW_SCAN_HINT = ("Batch each level: new[step:] = old[:-step] @ old[step:] is one call; avoid "
                  "per-index Python loops and copying every level twice.")


DEVICE_HINT = ("Your scan works on CPU tensors but not all on the GPU with CUDA ones: create "
               "every new tensor on W's device (torch.empty_like(W), or device=W.device) and "
               "keep .numpy() and .cpu() out of the scan.")


def _timing_failure_hint(raised: dict[str, Any]) -> str:
    """Why a scan that passed every check on CPU tensors could not be timed on CUDA ones."""
    if raised["type"] == "TooSlow":
        return ("A scan too slow to time is usually a Python loop over i inside each level: one "
                "batched matmul per level does the whole level.")
    if "device" in raised["message"].lower():
        return DEVICE_HINT
    return ("Your scan passed the checks on small CPU inputs but raised on the timing input "
            "(float32 on CUDA, N=4096): run it on torch.randn(4096, 32, 32, device='cuda').")


def judge_timing(obs: Observation) -> Verdict:
    from grader.checks.base import skipped

    lines = _figure_lines(obs)
    raised = obs["raised"]
    if obs["why_not_cuda"] is not None:
        note = f"{obs['why_not_cuda']}: CPU figures for information"
        if raised:
            note += f" (stopped early: {format_raised(raised)})"
        return skipped("\n".join([note, *lines]), not_applicable=True)
    if raised:
        return failed("\n".join([f"could not time your scan: {format_raised(raised)}", *lines]),
                      hint=_timing_failure_hint(raised))
    strays = [f"{name} on {where}" for name, where in obs.get("returned", {}).items()
              if not where.startswith(obs["device"])]
    if strays:
        return failed("\n".join([f"your scan returned {' and '.join(strays)} for inputs on "
                                 f"{obs['device']}: part of it ran elsewhere", *lines]),
                      hint=DEVICE_HINT)
    figures = obs["figures"]
    missing = [name for name in (*REFERENCE_FIGURES, *SCAN_FIGURES) if name not in figures]
    if missing:
        return failed("\n".join([f"your scan was too slow to time within the "
                                 f"{obs['budget_s']:g} s timing budget", *lines]),
                      hint=SLOW_SCAN_HINT)
    yours = sum(figures[name]["median"] for name in SCAN_FIGURES)
    reference = sum(figures[name]["median"] for name in REFERENCE_FIGURES)
    ratio = yours / reference
    summary = f"your scan takes {ratio:.2f}x the reference scan's time (limit {SPEED_LIMIT:g}x)"
    if ratio > SPEED_LIMIT:
        return failed("\n".join([summary, *lines]), hint=SLOW_SCAN_HINT)
    return passed("\n".join([summary, *lines]))
