"""The interviewer's follow-up questions, each backed by a live demonstration on the candidate's
own code.

A follow-up has three halves that run in three places:

- `probe(api)` runs in a forked child that imported the candidate's part (through the runner,
  like any check) and returns plain data: what torch raised, on which of the candidate's lines;
- `interpret(frame)` runs in the worker, where no candidate code ran, and turns the child's frame
  into JSON-able *evidence* (comparisons against the truth happen here);
- `question(evidence)` and `model_answer(evidence)` run in the CLI and write the text.

Importing this module imports neither torch nor numpy: the probes and interpreters import what
they need when they run.
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from grader.checks.api import Api

Evidence = dict[str, Any]
N, D = 4, 3  # the interviewer's tensors: small enough to print, big enough for every error

SEPARATE_SNIPPET = (
    "W = torch.randn(4, 3, 3, dtype=torch.float64, requires_grad=True)\n"
    "P = torch.empty_like(W)\n"
    "prefix_products_out(W, P)\n"
    "P.sum().backward()"
)
ALIASED_SNIPPET = (
    "W = torch.randn(4, 3, 3, dtype=torch.float64, requires_grad=True)\n"
    "prefix_products_out(W, W)        # P is W, which your docstring allows"
)


@dataclass(frozen=True)
class FollowUp:
    """One part's follow-up: the live demonstration and the words around it."""

    part: str
    probe: Callable[[Api], dict[str, Any]]
    interpret: Callable[[dict[str, Any]], Evidence]
    question: Callable[[Evidence], str]
    model_answer: Callable[[Evidence], str]
    topics: tuple[str, ...]
    flavors: tuple[str, ...] = ("torch", "numpy")


def _always(question: str) -> Callable[[Evidence], str]:
    """A question that does not depend on what the demonstration showed."""
    return lambda evidence: question


def _answer(before: str, measured: Callable[[Evidence], str],
            after: str) -> Callable[[Evidence], str]:
    """A model answer with a sentence measured on the candidate's code in the middle, when the
    demonstration ran."""
    return lambda evidence: before + (measured(evidence) if evidence["status"] == "measured"
                                      else "") + after


def _observation(frame: dict[str, Any]) -> tuple[dict[str, Any], Evidence | None]:
    """(the probe's data, None), or ({}, evidence saying why there is no demonstration): the
    child failed, or the candidate's function raised where it should not have."""
    if frame.get("kind") != "observation":
        return {}, {"status": "unavailable", "why": str(frame.get("message", "no result"))}
    data = frame["data"]
    if data.get("raised"):
        return {}, {"status": "unavailable", "why": data["raised"]["message"]}
    return data, None


# --- part 1: the real error from the candidate's in-place forward ------------------------------


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
    storage = P.untyped_storage().data_ptr()
    saved: list[dict[str, int]] = []

    def pack(t: Any) -> Any:
        if t.numel() and t.untyped_storage().data_ptr() == storage:
            saved.append({"slot": int((t.storage_offset() - P.storage_offset()) // P.stride(0)),
                          "version": int(t._version)})
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        try:
            fn(W, P)
        except Exception:  # noqa: BLE001 - only the saved tensors are of interest here
            pass
    return {"saved": saved, "final_version": int(P._version)}


def _interviewer_runs(api: Api, fn: Callable[..., Any]) -> list[dict[str, Any]]:
    """The two things an interviewer tries: backward through a separate P, then P is W."""
    import torch

    W = _leaf()
    P = torch.empty_like(W)
    separate: dict[str, Any] = {"snippet": SEPARATE_SNIPPET}
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
    separate["raised"] = raised.as_dict() if raised else None
    W = _leaf()
    _, raised = api.call(fn, W, W)
    aliased = {"snippet": ALIASED_SNIPPET, "stage": "forward",
               "raised": raised.as_dict() if raised else None,
               "line": raised.where if raised else ""}
    return [separate, aliased]


def _part1_probe(api: Api) -> dict[str, Any]:
    from grader.checks.api import Api as ProbeApi
    from grader.parts import PART1
    from grader.references import load_reference_part, reference_dir

    textbook = load_reference_part(PART1, "torch")
    folder = reference_dir("torch")
    textbook_api = ProbeApi(textbook, api.backend, folder)
    return {"yours": _interviewer_runs(api, api.function("prefix_products_out")),
            "textbook": _interviewer_runs(textbook_api, textbook.prefix_products_out)}


def _annotate(run: dict[str, Any]) -> dict[str, Any]:
    """Name the known autograd error a run raised (by its `grader explain` topic), and check a
    gradient that came back."""
    from grader.checks.autograd import autograd_error_topic

    out = {k: v for k, v in run.items() if k not in ("grad", "W", "raised")}
    raised = run.get("raised")
    out["raised"] = {k: raised[k] for k in ("type", "message", "where")} if raised else None
    out["error"] = autograd_error_topic(raised["message"]) if raised else None
    if raised is None and "grad" in run:
        import numpy as np

        from grader.checks import truth
        from grader.checks.compare import matches

        W = np.array(run["W"])
        out["grad_ok"] = matches(np.array(run["grad"]), truth.backward(W, np.ones_like(W)),
                                 "float64")
    return out


def _part1_interpret(frame: dict[str, Any]) -> Evidence:
    data, missing = _observation(frame)
    if missing:
        return missing
    yours = [_annotate(r) for r in data["yours"]]
    if any(r["error"] for r in yours):
        return {"status": "error", "runs": yours}
    return {"status": "textbook", "runs": yours,
            "yours_ran": not any(r["raised"] for r in yours),
            "textbook": [_annotate(r) for r in data["textbook"]]}


def _part1_question(evidence: Evidence) -> str:
    if evidence["status"] in ("error", "unavailable"):
        return ("The interviewer used your prefix_products_out on a W that requires grad and "
                "called backward. Explain this error in your own words: what does autograd "
                "keep for backward, what did your code change, how does torch notice, and how "
                "would you fix it?")
    if evidence["yours_ran"]:
        return ("Your prefix_products_out got through autograd, but the textbook in-place loop "
                "does not. Explain the textbook loop's error in your own words: what does "
                "autograd keep for backward, what does the loop change, how does torch notice, "
                "and why does your version escape it?")
    return ("Your prefix_products_out did not run on torch tensors, so the interviewer ported "
            "the textbook in-place loop. Explain its error in your own words: what does "
            "autograd keep for backward, what does the loop change, how does torch notice, and "
            "how would you fix it?")


def _stale_views(run: dict[str, Any]) -> str:
    saved = run.get("saved") or []
    if not saved:
        return ""
    slots = ", ".join(f"P[{s['slot']}] at version {s['version']}" for s in saved)
    last = saved[-1]
    return (f"Here autograd saved {slots}; by the end of the forward P stood at version "
            f"{run['final_version']}. Backward meets the last matmul first: its saved "
            f"P[{last['slot']}] expected version {last['version']} and found "
            f"{run['final_version']}. P[{last['slot']}]'s values never changed: the counter "
            "is shared by P and every view of it, so autograd cannot tell which slot a write "
            "touched and refuses rather than risk a wrong gradient.")


VERSION_COUNTER = (
    "The version counter: every tensor carries a counter, shared with all of its views, that "
    "each in-place write increments (you can read it as t._version). When autograd saves a "
    "tensor for backward (matmul saves both operands: for Y = A @ B, A's gradient G @ B^T "
    "needs B and B's gradient A^T @ G needs A) it records the counter's value; backward "
    "compares and raises 'modified by an inplace operation' if it moved. P[i] = P[i-1] @ W[i] "
    "saves P[i-1], a view of P, and the next assignment writes into P again."
)
LEAF = (
    "The leaf error: W is a leaf that requires grad, so W.grad is defined at the values the "
    "caller passed in. Writing into W (P is W: the first write P[0] = W[0] already does) would "
    "destroy them, so autograd refuses at the write itself, during the forward."
)
FIXES = (
    "Two fixes. (1) Out-of-place: make each product a new tensor and torch.stack them (Part 2); "
    "nothing autograd saved is ever written again. (2) Keep the in-place kernel inside a custom "
    "torch.autograd.Function: its forward runs without recording a graph, ctx.mark_dirty(P) "
    "declares the buffer it modified (and returns it), ctx.save_for_backward keeps W (and P) "
    "for a hand-written backward (Part 3). For P is W the leaf must not be written at all: "
    "compute into separate memory, or clone first."
)


def _part1_answer(evidence: Evidence) -> str:
    runs = evidence.get("textbook" if evidence["status"] == "textbook" else "runs", [])
    kinds = {r["error"] for r in runs if r["error"]}
    if evidence["status"] == "unavailable":  # no demonstration: explain both errors
        kinds = {"version-counter", "leaf-inplace"}
    pieces = [VERSION_COUNTER]
    pieces += [_stale_views(r) for r in runs if r["error"] == "version-counter"]
    if "leaf-inplace" in kinds:
        pieces.append(LEAF)
    if "detached-graph" in kinds:
        pieces.append("The detached error: P never joined W's graph (torch.no_grad, .data, "
                      "detach or a numpy round trip), so there is nothing to differentiate.")
    if evidence["status"] == "textbook" and evidence["yours_ran"]:
        pieces.append("Your version escapes because nothing autograd saved is written after it "
                      "was saved (or no graph is recorded while P is filled).")
    pieces.append(FIXES)
    return "\n\n".join(p for p in pieces if p)


# --- part 2: what autograd keeps alive ---------------------------------------------------------


def _part2_probe(api: Api) -> dict[str, Any]:
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
    return {"count": count, "bytes": total, "raised": raised.as_dict() if raised else None}


def _part2_interpret(frame: dict[str, Any]) -> Evidence:
    data, missing = _observation(frame)
    if missing:
        return missing
    return {"status": "measured", "count": data["count"], "bytes": data["bytes"], "n": N, "d": D}


PART2_QUESTION = (
    "Your out-of-place forward works with autograd where the in-place loop did not. Why? And "
    "what does autograd keep alive between forward and backward: how much memory, and how "
    "would you cut it?"
)


def _part2_measured(evidence: Evidence) -> str:
    return (f"Measured on your code with N={evidence['n']}, D={evidence['d']} (float64): "
            f"autograd saved {evidence['count']} tensors, {evidence['bytes']} bytes; the "
            "textbook loop saves both operands of each of its N-1 matmuls, 2(N-1) D x D "
            "matrices. ")


_part2_answer = _answer(
    "Every product is a new tensor that nothing writes again, so every tensor a matmul saved "
    "still has the version it was saved at when backward runs; torch.stack copies the "
    "products into a fresh result. ",
    _part2_measured,
    "That is O(N D^2) memory held from forward to backward, on top of P itself. To cut it: "
    "a custom autograd.Function that saves only W and P (the backward of Part 3 needs "
    "nothing else: the prefixes are P), or recompute the prefixes in backward "
    "(checkpointing: compute traded for memory).",
)


# --- part 3: why dW[j] collects every later prefix ----------------------------------------------

PROBED_SLOT = 2
PART3_N = 5


def _part3_probe(api: Api) -> dict[str, Any]:
    import numpy as np

    from grader.checks.cases import well_scaled

    rng = np.random.default_rng(0)
    W = well_scaled(rng, PART3_N, D)
    dP = np.zeros_like(W)
    dP[PROBED_SLOT] = rng.standard_normal((D, D))
    value, raised = api.call(api.function("prefix_products_backward"),
                             api.backend.native(W), api.backend.native(dP))
    if raised:
        return {"raised": raised.as_dict()}
    return {"raised": None, "dW": api.backend.to_numpy(value, "dW")}


def _part3_interpret(frame: dict[str, Any]) -> Evidence:
    data, missing = _observation(frame)
    if missing:
        return missing
    import numpy as np

    norms = [float(np.linalg.norm(m)) for m in data["dW"]]
    return {"status": "measured", "slot": PROBED_SLOT, "n": PART3_N, "norms": norms}


PART3_QUESTION = (
    "Why does dW[j] collect gradient from every later prefix P[j], ..., P[N-1]? Write dW[j] in "
    "closed form, and say what computing it that way would cost against your backward sweep."
)


def _part3_measured(evidence: Evidence) -> str:
    slot = evidence["slot"]
    shown = ", ".join(f"{n:.3g}" for n in evidence["norms"])
    return (f"Live, on your code: with dP zero except at P[{slot}], the norms of your "
            f"dW[0..{evidence['n'] - 1}] are {shown}: W[j] receives gradient exactly when "
            f"j <= {slot}, because only W[0..{slot}] appear in P[{slot}]. ")


_part3_answer = _answer(
    "W[j] is a factor of every prefix from P[j] on, so the chain rule sums over all of "
    "them: dW[j] = sum over i >= j of (W[0] ... W[j-1])^T dP[i] (W[j+1] ... W[i])^T, "
    "the prefix before j transposed on the left and the suffix after j transposed on the "
    "right (for Y = A @ B: dA = G B^T, dB = A^T G). ",
    _part3_measured,
    "Evaluated term by term that is O(N^2) matmuls, O(N^2 D^3). The backward sweep keeps "
    "the adjoint adj = sum over i >= j of dP[i] (W[j+1] ... W[i])^T: going down, "
    "adj = adj @ W[j]^T + dP[j-1] reuses the previous step, so every dW[j] = P[j-1]^T adj "
    "costs two matmuls: O(N D^3), the same order as the forward.",
)


# --- part 4: work and depth of the scan ---------------------------------------------------------

SCAN_SIZES = (8, 64)
SCAN_D = 4


def _part4_probe(api: Api) -> dict[str, Any]:
    import numpy as np

    from grader.checks.cases import well_scaled

    rng = np.random.default_rng(0)
    rows = []
    for n in SCAN_SIZES:
        W = api.backend.native(well_scaled(rng, n, SCAN_D))
        value, flops = api.backend.count_matmul_flops(
            api.function("hillis_steele_scan_forward"), W)
        levels = value[1] if isinstance(value, tuple | list) and len(value) == 2 else None
        rows.append({"n": n, "flops": int(flops),
                     "levels": len(levels) if isinstance(levels, list | tuple) else None})
    return {"rows": rows}


def _part4_interpret(frame: dict[str, Any]) -> Evidence:
    data, missing = _observation(frame)
    if missing:
        return missing
    rows = []
    for row in data["rows"]:
        sequential = 2 * SCAN_D**3 * (row["n"] - 1)
        rows.append({**row, "sequential_flops": sequential, "sequential_depth": row["n"] - 1})
    return {"status": "measured", "d": SCAN_D, "rows": rows}


PART4_QUESTION = (
    "What are the work and the depth of your scan against the sequential loop, and when does "
    "the scan win on a GPU?"
)


def _part4_measured(evidence: Evidence) -> str:
    lines = [f"N={r['n']}: your scan {r['flops']} matmul flops in {r['levels']} levels; the "
             f"loop {r['sequential_flops']} flops in {r['sequential_depth']} dependent steps"
             for r in evidence["rows"]]
    return f"Measured on your forward (D={evidence['d']}): " + "; ".join(lines) + ". "


_part4_answer = _answer(
    "Work: level s does N - s matmuls, about N log2 N of them in total, O(N D^3 log N) "
    "against the loop's N - 1 (O(N D^3)). Depth: ceil(log2 N) levels, each one batched "
    "matmul whose products are independent, against N - 1 matmuls that each wait for the "
    "previous one. ",
    _part4_measured,
    "The scan wins when the loop is latency-bound: long sequences of small matrices, where "
    "one D x D matmul cannot fill the GPU and the loop pays a kernel launch per step. It "
    "loses when D is large enough that a single matmul already saturates the device: then "
    "the extra log N factor of work is paid in full, plus O(N D^2 log N) memory if every "
    "level is cached for backward. (A work-efficient Blelloch scan does O(N) work in "
    "2 log N steps.) To measure it: synchronise before reading the clock (CUDA events or "
    "torch.utils.benchmark), warm up, report the median over many runs.",
)


FOLLOWUPS: dict[str, FollowUp] = {
    f.part: f for f in (
        FollowUp("part1", _part1_probe, _part1_interpret, _part1_question, _part1_answer,
                 ("version-counter", "leaf-inplace", "mark-dirty")),
        FollowUp("part2", _part2_probe, _part2_interpret, _always(PART2_QUESTION), _part2_answer,
                 ("views", "mark-dirty"), flavors=("torch",)),
        FollowUp("part3", _part3_probe, _part3_interpret, _always(PART3_QUESTION), _part3_answer,
                 ("backward-derivation", "gradcheck")),
        FollowUp("part4", _part4_probe, _part4_interpret, _always(PART4_QUESTION), _part4_answer,
                 ("hillis-steele", "work-depth")),
    )
}


def followup_for(part: str, flavor: str) -> FollowUp | None:
    """The part's follow-up in this flavor, if it has one."""
    followup = FOLLOWUPS.get(part)
    return followup if followup is not None and flavor in followup.flavors else None
