"""Prefix products, candidate side: how each check calls the candidate's functions and reads what
came back, and the probes no generic kind covers.

Everything here runs in the child beside candidate code and returns plain data; the verdicts are
made in checks.py. A case arrives as {"inputs": {"W": array, "dP": array}, "label": str}.
"""

from __future__ import annotations

import re
import time
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from grader.round_api.probes import Api, CandidateFault, Raised, as_dict, custom_function

FORWARD = "hillis_steele_scan_forward"
BACKWARD = "hillis_steele_scan_backward"

# --- argument builders and readers --------------------------------------------------------------


def into_nan_buffer(api: Api, case: dict[str, Any]) -> tuple[Any, Any]:
    W = case["inputs"]["W"]
    return api.backend.native(W), api.backend.nan_buffer(W.shape, str(W.dtype))


def same_buffer(api: Api, case: dict[str, Any]) -> tuple[Any, Any]:
    W = api.backend.native(case["inputs"]["W"])
    return W, W


def read_buffer(api: Api, args: tuple[Any, ...], value: Any) -> np.ndarray:
    """What landed in the caller's P (not what was returned)."""
    return api.backend.to_numpy(args[1], "P")


def split_forward(value: Any) -> tuple[Any, Any]:
    """(P, levels) from what the scan's forward returned, or a clear fault."""
    if not isinstance(value, tuple | list) or len(value) != 2:
        raise CandidateFault(f"{FORWARD} should return the pair (P, levels); it returned a "
                             f"{type(value).__name__}")
    return value[0], value[1]


def scan_p(api: Api, args: tuple[Any, ...], value: Any) -> np.ndarray:
    return api.backend.to_numpy(split_forward(value)[0], "P")


def scan_gradient(api: Api, case: dict[str, Any]) -> dict[str, Any]:
    """Forward then backward on one case; a failure of the forward is reported as such."""
    W = api.backend.native(case["inputs"]["W"])
    value, raised = api.call(api.function(FORWARD), W)
    if raised:
        return {"value": None, "raised": raised.as_dict(), "stage": "forward"}
    _, levels = split_forward(value)
    dW, raised = api.call(api.function(BACKWARD), levels,
                          api.backend.native(case["inputs"]["dP"]))
    if raised:
        return {"value": None, "raised": raised.as_dict(), "stage": "backward"}
    return {"value": api.backend.to_numpy(dW, "dW"), "raised": None, "stage": "backward"}


def scan_outputs(api: Api, case: dict[str, Any]) -> dict[str, Any]:
    """The scan's P and dW (its backward on its own levels), as arrays, for checks that read
    both results (their dtypes)."""
    both, raised = scan_both(api, {name: api.backend.native(case["inputs"][name])
                                   for name in ("W", "dP")})
    if raised:
        return {"value": None, "raised": raised.as_dict()}
    P, dW = both
    return {"value": {"P": api.backend.to_numpy(P, "P"), "dW": api.backend.to_numpy(dW, "dW")},
            "raised": None}


def scan_gradient_both(api: Api, case: dict[str, Any]) -> dict[str, Any]:
    """scan_gradient, plus the candidate's backward on the reference's levels (when it accepts
    them), so the judge can tell a wrong backward from wrong levels."""
    observed = scan_gradient(api, case)
    if observed["raised"] is None:
        levels = [(int(step), api.backend.native(np.asarray(old)))
                  for step, old in case["extra"]["levels"]]
        dW, raised = api.call(api.function(BACKWARD), levels,
                              api.backend.native(case["inputs"]["dP"]))
        observed["on_reference"] = None if raised else api.backend.to_numpy(dW, "dW")
        observed["levels"] = _levels_data(api, case)
    return observed


def _levels_data(api: Api, case: dict[str, Any]) -> list[list[Any]] | None:
    """The candidate's levels as plain (step, array) pairs, when they have that shape."""
    value, raised = api.call(api.function(FORWARD), api.backend.native(case["inputs"]["W"]))
    try:
        return [[int(step), api.backend.to_numpy(old)] for step, old in split_forward(value)[1]]
    except (TypeError, ValueError, CandidateFault):
        return None


def fill_fresh_buffer(api: Api, natives: dict[str, Any]) -> tuple[Any, Raised | None]:
    """Part 1 on W and a separate NaN buffer (only W is an input here): (the buffer as the
    call left it, what it raised)."""
    W = natives["W"]
    P = api.backend.nan_buffer(tuple(W.shape), api.backend.dtype_name(W))
    return P, api.call(api.function("prefix_products_out"), W, P)[1]


def scan_both(api: Api, natives: dict[str, Any]) -> tuple[Any, Raised | None]:
    """The scan's forward on W, then its backward on dP: (P, dW), or what was raised. Both
    are results the caller owns: a P that is W itself (where N <= 1 leaves nothing to
    multiply) or a dW that is dP shares memory the caller still holds as an input."""
    value, raised = api.call(api.function(FORWARD), natives["W"])
    if raised:
        return None, raised
    P, levels = split_forward(value)
    dW, raised = api.call(api.function(BACKWARD), levels, natives["dP"])
    return (P, dW), raised


def scan_forward_result(api: Api, natives: dict[str, Any]) -> Any:
    """The scan's P (its depth is what part4.depth measures)."""
    return split_forward(api.function(FORWARD)(natives["W"]))[0]


def scan_backward_result(api: Api, natives: dict[str, Any]) -> Any:
    """The scan's dW, from the candidate's own levels."""
    _, levels = split_forward(api.function(FORWARD)(natives["W"]))
    return api.function(BACKWARD)(levels, natives["dP"])


def scan_backward_args(api: Api, case: dict[str, Any]) -> tuple[Any, Any]:
    """(levels, dP) for a call of the scan's backward: the levels from the candidate's own
    forward, made before the call that the counter watches."""
    natives = {name: api.backend.native(np.asarray(case["inputs"][name])) for name in ("W", "dP")}
    value, raised = api.call(api.function(FORWARD), natives["W"])
    if raised is not None:
        raise CandidateFault(f"{FORWARD} raised {raised.as_dict()['type']}, so the backward's "
                             "levels could not be made")
    return split_forward(value)[1], natives["dP"]


# --- autograd.Functions around the candidate's backward, for gradcheck --------------------------


def scan_function(api: Api, case: dict[str, Any]) -> Callable[..., Any]:
    fwd, bwd, backend = api.function(FORWARD), api.function(BACKWARD), api.backend

    def forward(W: Any) -> tuple[Any, Any]:
        P, levels = split_forward(fwd(backend.from_tensor(W)))
        return backend.to_tensor(P, "P"), levels

    return custom_function(forward, lambda inputs, levels, dP: backend.to_tensor(
        bwd(levels, backend.from_tensor(dP)), "dW"))


# --- special probes -----------------------------------------------------------------------------


def empty_out(api: Api, function: str) -> dict[str, Any]:
    W = api.backend.native(np.zeros((0, 3, 3)))
    P = api.backend.native(np.zeros((0, 3, 3)))
    value, raised = api.call(api.function(function), W, P)
    return {"raised": as_dict(raised), "is_p": value is P}


def returns_p(api: Api, case: dict[str, Any]) -> dict[str, Any]:
    W, P = into_nan_buffer(api, case)
    value, raised = api.call(api.function("prefix_products_out"), W, P)
    return {"raised": as_dict(raised), "is_p": value is P, "returned": type(value).__name__}


def storage(api: Api, case: dict[str, Any]) -> dict[str, Any]:
    W = case["inputs"]["W"]
    P = api.backend.nan_buffer(W.shape, str(W.dtype), contiguous=False)
    address, strides = api.backend.address(P), api.backend.strides(P)
    _, raised = api.call(api.function("prefix_products_out"), api.backend.native(W), P)
    return {"raised": as_dict(raised), "same_address": api.backend.address(P) == address,
            "strides": [strides, api.backend.strides(P)], "value": api.backend.to_numpy(P, "P")}


def memory(api: Api, case: dict[str, Any]) -> dict[str, Any]:
    W, P = into_nan_buffer(api, case)
    _, extra = api.backend.extra_memory(api.function("prefix_products_out"), W, P)
    return {"extra": extra, "P": api.backend.to_numpy(P, "P")}


def levels(api: Api, cases: list[dict[str, Any]]) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    for case in cases:
        n = int(case["inputs"]["W"].shape[0])
        value, raised = api.call(api.function(FORWARD), api.backend.native(case["inputs"]["W"]))
        if raised:
            return rows + [{"n": n, "raised": raised.as_dict()}]
        found = split_forward(value)[1]
        try:
            count = len(found)
        except TypeError as exc:
            raise CandidateFault(f"levels should be a list, got {type(found).__name__}") from exc
        rows.append({"n": n, "raised": None, "levels": count})
    return rows


# --- timing the scan (part4.timing) -------------------------------------------------------------


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


TIMED_WARMUP, TIMED_REPEATS = 2, 50
"""The calls a timed function gets at most: its warm-up calls, then its timed repeats."""


class _Bench:
    """One child's timing session: the device, the inputs, the stopwatch and the budget.

    Each call of a timed function gets inputs of its own: the stack's matrices (and dP's) in
    an order drawn for that call from the run's seed, the same in the reference's process, so
    no call can be answered from an earlier one; and each call's answer is projected on the
    run's random weights (its dot product with them, and the sum of their absolute products
    as its scale), which the judge compares with the reference's answer to the same call: a
    time is only the cost of work that gave the right answer."""

    def __init__(self, settings: dict[str, Any], flavor: str) -> None:
        import torch

        from grader.round_api.probes import CudaStopwatch, Stopwatch, steady_host_allocator

        self.settings = settings
        self.device, self.why_not_cuda = resolve_device(settings["device"], flavor)
        self.W, self.dP = settings["W"], settings["dP"]
        self.n, self.d = int(self.W.shape[0]), int(self.W.shape[1])
        if self.device == "cuda":
            self.stopwatch: Stopwatch = CudaStopwatch(torch)
        else:  # on a CPU the question is how much work: this process's CPU time, not the clock
            steady_host_allocator()
            self.stopwatch = Stopwatch(clock=time.process_time)
        self.figures: dict[str, Any] = {}
        self.answers: dict[str, list[list[float]]] = {}
        self.untimed: list[str] = []
        self.deadline = 0.0
        rng = np.random.default_rng(settings["order_seed"])
        self.orders = [rng.permutation(self.n) for _ in range(TIMED_WARMUP + TIMED_REPEATS)]
        weights = rng.standard_normal(self.W.shape)
        self.weights = torch.from_numpy(weights).to(self.device)
        self.numpy_weights = weights

    def variants(self, x: Any) -> list[Any]:
        """x (W or dP, on the timing device) in each call's order of its matrices."""
        import torch

        if isinstance(x, np.ndarray):
            return [x[order] for order in self.orders]
        return [x[torch.from_numpy(order).to(x.device)] for order in self.orders]

    def project(self, x: Any) -> Any:
        """A call's answer as [its dot product with the weights, its scale]: on the device,
        unsynchronised, for a tensor; NaN for an answer of another shape or kind."""
        import torch

        if isinstance(x, np.ndarray) and x.shape == self.numpy_weights.shape:
            product = x.astype(np.float64) * self.numpy_weights
            return [float(product.sum()), float(np.abs(product).sum())]
        if isinstance(x, torch.Tensor) and tuple(x.shape) == tuple(self.weights.shape):
            product = x.detach().to(self.weights.device, torch.float64) * self.weights
            return [product.sum(), product.abs().sum()]
        return [float("nan"), float("nan")]

    def start_clock(self) -> None:
        self.stopwatch.sync()
        self.deadline = self.stopwatch.clock() + self.settings["budget_s"]

    def timed(self, name: str, call: Callable[[int], Any],
              answer: Callable[[Any], Any] = lambda value: value) -> None:
        """Time `call(k)`, k the call's number (its inputs' order), keeping the projection of
        each call's `answer` (what of its result is judged)."""
        from grader.round_api.probes import measure

        if self.stopwatch.clock() >= self.deadline:
            self.untimed.append(name)
            return
        kept: list[Any] = []

        def once() -> None:
            kept.append(self.project(answer(call(len(kept)))))

        self.figures[name] = measure(once, self.stopwatch, warmup=TIMED_WARMUP,
                                     max_repeats=TIMED_REPEATS,
                                     budget_s=self.settings["repeat_s"],
                                     call_limit_s=self.settings["call_limit_s"],
                                     deadline=self.deadline).as_dict()
        self.answers[name] = [[float(v) for v in pair] for pair in kept]

    def report(self, raised: Any = None, **more: Any) -> dict[str, Any]:
        import torch

        return {"device": self.device, "why_not_cuda": self.why_not_cuda, "n": self.n,
                "d": self.d, "figures": self.figures, "answers": self.answers,
                "untimed": self.untimed,
                "device_name": torch.cuda.get_device_name() if self.device == "cuda" else "CPU",
                "raised": as_dict(raised), **more}


def _device_of(value: Any) -> str:
    return str(getattr(value, "device", "cpu"))


def time_reference(api: Api, settings: dict[str, Any]) -> dict[str, Any]:
    """The yardstick, timed in a child that never imported the candidate's code: the reference
    scan's forward and backward and the reference sequential forward (torch)."""
    import torch

    from grader.round_api.probes import Round, load_reference_part

    round_ = Round.load(Path(__file__).resolve().parent)
    scan = load_reference_part(round_, round_.part("part4"), "torch")
    sequential = load_reference_part(round_, round_.part("part2"), "torch").prefix_products
    bench = _Bench(settings, "torch" if api.flavor == "torch" else "numpy")
    W, dP = (torch.from_numpy(a).to(bench.device) for a in (bench.W, bench.dP))
    # Set the device up untimed (CUDA context, cuBLAS handles, kernels) on the reference, so
    # that neither the budget nor the first figure pays for it.
    levels_ = scan.hillis_steele_scan_forward(W)[1]
    scan.hillis_steele_scan_backward(levels_, dP)
    Ws, dPs = bench.variants(W), bench.variants(dP)
    bench.start_clock()
    bench.timed("reference scan forward", lambda k: scan.hillis_steele_scan_forward(Ws[k]),
                first)
    bench.timed("reference scan backward",
                lambda k: scan.hillis_steele_scan_backward(levels_, dPs[k]))
    bench.timed("reference sequential forward", lambda k: sequential(Ws[k]))
    return bench.report()


def first(value: Any) -> Any:
    """What of a scan's forward is judged: P, not its levels (their layout is the scan's)."""
    return split_forward(value)[0]


def time_scan(api: Api, settings: dict[str, Any]) -> dict[str, Any]:
    """The candidate's scan (and, when their Part 2 passed in this run, their sequential
    forward) on the same inputs and device as the yardstick."""
    bench = _Bench(settings, api.flavor)
    W, dP = (api.backend.native(a) for a in (bench.W, bench.dP))
    if api.flavor == "torch":
        W, dP = W.to(bench.device), dP.to(bench.device)
    fwd, bwd = api.function(FORWARD), api.function(BACKWARD)
    returned: dict[str, str] = {}
    sequential_note = settings["sequential_note"]

    def run_all() -> None:
        P, levels_ = split_forward(fwd(W))
        returned["P"] = _device_of(P)
        returned["dW"] = _device_of(bwd(levels_, dP))
        Ws, dPs = bench.variants(W), bench.variants(dP)
        bench.start_clock()
        bench.timed("your scan forward", lambda k: fwd(Ws[k]), first)
        bench.timed("your scan backward", lambda k: bwd(levels_, dPs[k]))
        if settings["time_sequential"]:
            sequential = api.other_part(settings["sequential_module"]).prefix_products
            bench.timed("your sequential forward", lambda k: sequential(Ws[k]))

    _, raised = api.call(run_all)
    return bench.report(raised, returned=returned, sequential_note=sequential_note)


# --- the interviewer's follow-up demonstrations -------------------------------------------------

N, D = 4, 3  # the interviewer's tensors: small enough to print, big enough for every error


def _leaf() -> Any:
    import torch

    generator = torch.Generator().manual_seed(0)
    return torch.randn(N, D, D, dtype=torch.float64, generator=generator).requires_grad_()


def _located(caught: list[warnings.WarningMessage], folder: Path) -> str:
    """The deepest frame inside `folder` of anomaly mode's "Traceback of forward call"."""
    frame = re.compile(r'File "(?P<file>[^"]+)", line (?P<line>\d+), in \S+\n\s+(?P<code>.+)')
    where = ""
    for warning in caught:
        text = str(warning.message)
        if "Traceback of forward call" not in text:
            continue
        for match in frame.finditer(text):
            path = Path(match["file"])
            if path.is_relative_to(folder):
                where = (f"{path.relative_to(folder.parent)}, line {match['line']}: "
                         f"{match['code'].strip()}")
    return where


def _forward_line(api: Api, fn: Callable[..., Any]) -> str:
    """Re-run the failing case under anomaly detection, which records each operation's
    forward traceback, to name the candidate's line that created the failing node (the
    backward's own traceback only shows torch internals)."""
    import torch

    W = _leaf()
    P = torch.empty_like(W)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with torch.autograd.detect_anomaly(check_nan=False):
            try:
                fn(W, P)
                P.sum().backward()
            except Exception:  # noqa: BLE001 - the error itself was captured already
                pass
    return _located(caught, Path(api.folder))


def _saved_views(fn: Callable[..., Any]) -> dict[str, Any]:
    """Which slices of P autograd saved for backward, and at which version of P.

    Runs separately: with saved-tensor hooks installed torch skips the version check, so this
    run could not have produced the error.
    """
    import torch

    W = _leaf()
    P = torch.empty_like(W)
    storage_ptr = P.untyped_storage().data_ptr()
    saved: list[dict[str, int]] = []

    def pack(t: Any) -> Any:
        if t.numel() and t.untyped_storage().data_ptr() == storage_ptr:
            saved.append({"slot": int((t.storage_offset() - P.storage_offset()) // P.stride(0)),
                          "version": int(t._version)})
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        try:
            fn(W, P)
        except Exception:  # noqa: BLE001 - only the saved tensors are of interest here
            pass
    return {"saved": saved, "final_version": int(P._version)}


def _interviewer_runs(api: Api, fn: Callable[..., Any],
                      snippets: dict[str, str]) -> list[dict[str, Any]]:
    """The two things an interviewer tries: backward through a separate P, then P is W."""
    import torch

    W = _leaf()
    P = torch.empty_like(W)
    separate: dict[str, Any] = {"snippet": snippets["separate"]}
    _, raised = api.call(fn, W, P)
    if raised is None:
        _, raised = api.call(lambda: P.sum().backward())
        separate["stage"] = "backward"
        if raised is not None:
            separate.update(line=_forward_line(api, fn), **_saved_views(fn))
        else:
            separate.update(grad=W.grad.tolist(), W=W.detach().tolist())
    else:
        separate.update(stage="forward", line=raised.where)
    separate["raised"] = as_dict(raised)
    W = _leaf()
    _, raised = api.call(fn, W, W)
    aliased = {"snippet": snippets["aliased"], "stage": "forward", "raised": as_dict(raised),
               "line": raised.where if raised else ""}
    return [separate, aliased]


def followup_part1(api: Api, snippets: dict[str, str]) -> list[dict[str, Any]]:
    """The interviewer runs the candidate's in-place forward under autograd."""
    return _interviewer_runs(api, api.function("prefix_products_out"), snippets)


def followup_part1_textbook(api: Api, snippets: dict[str, str]) -> list[dict[str, Any]]:
    """The same runs on the textbook in-place loop (a child without candidate code)."""
    from grader.round_api.probes import Api as ProbeApi
    from grader.round_api.probes import Round, load_reference_part

    round_ = Round.load(Path(__file__).resolve().parent)
    textbook = load_reference_part(round_, round_.part("part1"), "torch")
    textbook_api = ProbeApi(textbook, api.backend, round_.reference_dir("torch"))
    return _interviewer_runs(textbook_api, textbook.prefix_products_out, snippets)


def followup_part2(api: Api) -> dict[str, Any]:
    """What autograd keeps alive between the candidate's forward and its backward."""
    import torch

    fn = api.function("prefix_products")
    W = _leaf()
    count, total = 0, 0

    def pack(t: Any) -> Any:
        nonlocal count, total
        count += 1
        total += t.numel() * t.element_size()
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        _, raised = api.call(fn, W)
    return {"count": count, "bytes": total, "raised": as_dict(raised), "n": N, "d": D}


def followup_part3(api: Api, W: np.ndarray, dP: np.ndarray) -> dict[str, Any]:
    """The candidate's backward with dP zero except at one slot."""
    value, raised = api.call(api.function("prefix_products_backward"),
                             api.backend.native(W), api.backend.native(dP))
    if raised:
        return {"raised": raised.as_dict()}
    return {"raised": None, "dW": api.backend.to_numpy(value, "dW")}


def followup_part4(api: Api, stacks: list[np.ndarray]) -> dict[str, Any]:
    """Matmul work and level count of the candidate's scan forward at two sizes."""
    rows = []
    for W in stacks:
        value, flops = api.backend.count_matmul_flops(api.function(FORWARD),
                                                      api.backend.native(W))
        found = value[1] if isinstance(value, tuple | list) and len(value) == 2 else None
        rows.append({"n": int(W.shape[0]), "flops": int(flops),
                     "levels": len(found) if isinstance(found, list | tuple) else None})
    return {"rows": rows, "raised": None}
