"""The warm worker: imports torch and numpy once, then grades requests read from stdin.

For each part of a request it builds the checks' plans (the judge's half), runs any baseline
probes in children that never import candidate code, forks a child (runner.child) that imports
the candidate's file and runs the probes, and judges each observation here, where no candidate
code has run. A child that hangs is killed at the per-check timeout and the part's remaining
checks are reported as not run; a child that dies mid-check costs that check only (a fresh child
picks up from the next one). Events go to stdout as JSON lines.

Run as `python -P -m grader.runner.worker` (-P: the current folder is not put on sys.path, so
a folder called grader/ where the command was started cannot shadow this package).
"""

from __future__ import annotations

import fcntl
import json
import os
import signal
import sys
import tempfile
import time
import traceback
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import asdict
from pathlib import Path
from typing import Any, TextIO

from grader.checks.base import Check, Context, Plan, Verdict, skipped
from grader.checks.table import checks_for, load_module
from grader.results import CheckResult, PartResult, Status, scale_to_weight
from grader.rounds import Part, Round, get_round
from grader.runner.child import run_baseline, run_child
from grader.runner.protocol import (
    LAST_WORDS_SIGNAL,
    Event,
    FrameTimeout,
    Request,
    probe_frame,
    read_frame,
)

Emit = Callable[[Event], None]
LAST_WORDS_GRACE_S = 0.5  # how long a hung child may take to send what it printed
DEVICE_SETUP_S = 30.0  # allowed on top of the timeout to a probe that sets up CUDA


def cuda_in_reach() -> bool:
    """Whether a forked child will find CUDA. torch asks NVML here (the worker runs with
    PYTORCH_NVML_BASED_CUDA_CHECK=1), so the worker never initialises CUDA itself and its
    forked children still can."""
    import torch

    return bool(torch.cuda.is_available())


def device_ready(request: Request, plans: list[Plan]) -> bool:
    """A plan of this part will use CUDA: it wants the device, and the request allows it."""
    return (any(p.uses_device for p in plans) and request.flavor == "torch"
            and request.device != "cpu" and cuda_in_reach())


DEVICE_LOCK = Path(tempfile.gettempdir()) / f"grader-device-{os.getuid()}.lock"


@contextmanager
def device_turn(needed: bool) -> Iterator[None]:
    """One grading process at a time on the GPU (`grade --jobs`, or two terminals): a scan timed
    while another submission runs kernels on the same device would be judged in a crowd its
    reference timing never saw. The children are forked only once the turn is held, so waiting
    for it never eats into a check's timeout. A POSIX record lock belongs to this process alone:
    a forked child never holds it, however long it outlives the turn. Without a lock file,
    grading goes on unlocked."""
    if not needed:
        yield
        return
    try:
        fd = os.open(DEVICE_LOCK, os.O_RDWR | os.O_CREAT, 0o600)
    except OSError:
        yield
        return
    try:
        fcntl.lockf(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def frame_timeout(request: Request, plan: Plan, ready: bool) -> float:
    """How long one probe may take: the request's timeout, plus time to set up CUDA for a probe
    that uses the device when there is one (context creation alone can take seconds)."""
    return request.timeout_s + (DEVICE_SETUP_S if plan.uses_device and ready else 0.0)


class _Child:
    """A forked child and the read end of its pipe: running plans[start:] against the
    candidate's part, or (part None) one baseline probe with no candidate code."""

    def __init__(self, request: Request, round_: Round, part: Part | None, plans: list[Plan],
                 start: int, ready: bool = False) -> None:
        helpers = load_module(round_, "probes")
        read_fd, write_fd = os.pipe()
        worker_pid = os.getpid()
        pid = os.fork()
        if pid == 0:
            os.close(read_fd)
            if part is None:
                probe, args = plans[start].baseline  # type: ignore[misc]
                run_baseline(write_fd, probe, args, request.flavor, request.memory_mb, helpers,
                             round_.reference_dir("torch"), worker_pid, ready)
            run_child(write_fd, Path(request.root), part, request.flavor, plans, start,
                      request.memory_mb, helpers, worker_pid, ready)
        os.close(write_fd)
        self.pid, self.fd, self.device_ready = pid, read_fd, ready

    def next_frame(self, timeout_s: float) -> dict[str, Any] | None:
        """The next frame; a malformed one reads as an error frame, not a worker crash."""
        try:
            frame = read_frame(self.fd, time.monotonic() + timeout_s)
        except FrameTimeout:
            raise
        except Exception as exc:  # noqa: BLE001 - whatever the child wrote, the worker goes on
            return dict(probe_frame("error", message=f"unreadable result from the child "
                                    f"process: {exc}"))
        if frame is not None and not isinstance(frame, dict):
            return dict(probe_frame("error", message="unreadable result from the child process"))
        return frame

    def last_words(self, grace_s: float = LAST_WORDS_GRACE_S) -> tuple[str, str]:
        """(what a hung child printed since its last frame, the candidate's line it was on),
        asked for before it is killed; empty when it cannot answer within the grace (stuck in
        C code, or its handler replaced)."""
        try:
            os.kill(self.pid, LAST_WORDS_SIGNAL)
            frame = read_frame(self.fd, time.monotonic() + grace_s)
        except Exception:  # noqa: BLE001 - gone, silent or garbled: nothing to add
            return "", ""
        if isinstance(frame, dict) and frame.get("kind") == "last_words":
            return str(frame.get("output", "")), str(frame.get("where", ""))
        return "", ""

    def end(self, kill: bool) -> str:
        """Reap the child (killing its process group first if asked); how it ended, in words."""
        if kill:
            for target in (lambda: os.killpg(self.pid, signal.SIGKILL),
                           lambda: os.kill(self.pid, signal.SIGKILL)):
                try:
                    target()
                except (ProcessLookupError, PermissionError):
                    pass
        os.close(self.fd)
        _, status = os.waitpid(self.pid, 0)
        if os.WIFSIGNALED(status):
            sig = os.WTERMSIG(status)
            return f"killed by signal {signal.Signals(sig).name}"
        return f"exited with code {os.WEXITSTATUS(status)}"


class _Part:
    """One part being graded: its checks, their contexts and plans, and the results so far."""

    def __init__(self, request: Request, round_: Round, part: Part, checks: list[Check],
                 contexts: list[Context], plans: list[Plan]) -> None:
        self.request, self.round, self.part = request, round_, part
        self.checks, self.contexts, self.plans = checks, contexts, plans
        self.ready = device_ready(request, plans)
        self.results: list[CheckResult] = []

    @classmethod
    def planned(cls, request: Request, round_: Round, part: Part,
                earlier: list[PartResult]) -> _Part:
        """The part's checks from the round's table, each planned in its own context."""
        checks = checks_for(round_, part.id, request.flavor)
        cuda = request.flavor == "torch" and request.device != "cpu" and any(
            c.needs == "cuda" for c in checks) and cuda_in_reach()
        contexts = [Context(request.seed, request.flavor, c.id, request.device,
                            request.timeout_s, cuda, tuple(p.id for p in earlier),
                            tuple(p.id for p in earlier if p.passed)) for c in checks]
        plans = [c.plan(ctx) if request.informational or c.applies(ctx) else _not_run_here(c)
                 for c, ctx in zip(checks, contexts, strict=True)]
        return cls(request, round_, part, checks, contexts, plans)

    def result(self, index: int, verdict: Verdict, duration: float, output: str,
               status: Status | None = None) -> None:
        check, ctx = self.checks[index], self.contexts[index]
        final: Status = status or verdict.status
        applies = check.applies(ctx) and not (final == "skipped" and verdict.not_applicable)
        max_score = check.points if applies else 0.0
        score = max_score * (1.0 if final == "passed" else verdict.fraction
                             if final == "failed" else 0.0)
        self.results.append(CheckResult(
            id=check.id, title=check.title, status=final, score=score, max_score=max_score,
            message=verdict.message, hint=verdict.hint, duration_s=duration, output=output,
            not_implemented=verdict.stub, after=list(check.after), rank=check.rank))

    def not_run(self, start: int, why: str, status: Status = "skipped",
                output: str = "") -> int:
        """Report checks[start:] with one reason (the printed output goes with the first)."""
        for i in range(start, len(self.checks)):
            self.result(i, Verdict("failed", why), 0.0, output if i == start else "", status)
        return len(self.checks)


def _not_run_here(check: Check) -> Plan:
    """The stand-in plan of a check that cannot apply on this machine, when its figures were
    not asked for (Request.informational)."""
    why = f"cannot apply here (it needs {check.needs}); not run"
    return Plan("nothing", {}, lambda data: skipped(why, not_applicable=True))


def grade_part(request: Request, round_: Round, part: Part,
               earlier: list[PartResult]) -> list[CheckResult]:
    """Grade every check of one part; the results' points add up to the part's weight."""
    return run_part(_Part.planned(request, round_, part, earlier))


def run_part(grading: _Part) -> list[CheckResult]:
    """Run a part's plans: baselines first, then children (a fresh one after each crash)."""
    with device_turn(grading.ready):
        baselines = run_baselines(grading)
        index = 0
        while index < len(grading.checks):
            child = _Child(grading.request, grading.round, grading.part, grading.plans, index,
                           grading.ready)
            index = _collect(grading, child, index, baselines)
    void_results(grading.checks, grading.results)
    part = grading.part
    scale_to_weight(grading.results, (grading.request.weights or {}).get(part.id, part.weight))
    return grading.results


def void_results(checks: list[Check], results: list[CheckResult]) -> None:
    """A failed check that voids others (autograd inside a hand-written backward) takes their
    points: their values cannot count, whatever they showed."""
    by_id = {r.id: r for r in results}
    for check in checks:
        if by_id[check.id].status not in ("failed", "error", "timeout") or not check.voids:
            continue
        for voided in (by_id[v] for v in check.voids if v in by_id):
            if voided.status in ("passed", "failed"):
                shown = f" (on its own it {voided.status})"
                voided.status, voided.score, voided.hint = "failed", 0.0, None
                voided.message = f"{check.void_message}{shown}: see {check.id}"
                voided.after = [check.id]


def run_baselines(grading: _Part) -> dict[int, dict[str, Any]]:
    """Each plan's baseline probe, run in a child with no candidate code: frame by plan index."""
    frames = {}
    for index, plan in enumerate(grading.plans):
        if plan.baseline is not None:
            frames[index] = _baseline_frame(grading, index)
    return frames


def _baseline_frame(grading: _Part, index: int) -> dict[str, Any]:
    request, plan = grading.request, grading.plans[index]
    child = _Child(request, grading.round, None, grading.plans, index, grading.ready)
    try:
        frame = child.next_frame(frame_timeout(request, plan, grading.ready))
    except FrameTimeout:
        child.end(kill=True)
        return dict(probe_frame("error", message="the reference did not finish in time"))
    how = child.end(kill=frame is None)
    return frame if frame is not None else dict(probe_frame(
        "error", message=f"the process running the reference {how}"))


def _with_baseline(frame: dict[str, Any], baseline: dict[str, Any] | None) -> dict[str, Any]:
    """The observation a judge with a baseline receives."""
    if baseline is None or frame["kind"] != "observation":
        return frame
    ok = baseline["kind"] == "observation"
    return {**frame, "data": {"yours": frame["data"], "baseline": baseline["data"] if ok
                              else None, "baseline_error": "" if ok else baseline["message"]}}


def _judge(plan: Plan, frame: dict[str, Any]) -> tuple[Verdict, Status | None]:
    """Turn a child's frame into a verdict (and a status override for errors)."""
    kind = frame["kind"]
    if kind == "observation":
        try:
            return plan.judge(frame["data"]), None
        except Exception as exc:  # noqa: BLE001 - odd data from odd candidate code
            return Verdict("failed", f"could not judge this result: {type(exc).__name__}: "
                           f"{exc}"), "error"
    if kind == "not_implemented":
        return Verdict("failed", f"not implemented yet ({frame['message']})",
                       "Fill in the stub, then run the check again.", stub=True), None
    if kind == "fault":
        return Verdict("failed", frame["message"]), None
    return Verdict("failed", frame["message"]), "error"


def _time_out(grading: _Part, child: _Child, index: int, why: str, what: str, began: float,
              output: str) -> int:
    """Kill a child that hung in checks[index] (or in `what` before it); the part's remaining
    checks are not run, so a hang costs one timeout per part, not one per check."""
    printed, where = child.last_words()
    output += printed
    if where:
        why += f"\n  it was at {where}"
    child.end(kill=True)
    grading.result(index, Verdict("failed", why), time.perf_counter() - began, output, "timeout")
    return grading.not_run(index + 1, f"not run: {what} timed out")


def _collect(grading: _Part, child: _Child, index: int,
             baselines: dict[int, dict[str, Any]]) -> int:
    """Read one child's frames; return the index of the first check still to run."""
    request, part = grading.request, grading.part
    began = time.perf_counter()
    try:
        hello = child.next_frame(request.timeout_s)
    except FrameTimeout:
        why = (f"importing {part.file} did not finish within {request.timeout_s:g} s "
               "(a loop or a long computation at module level?)")
        return _time_out(grading, child, index, why, "importing the part", began, "")
    if hello is None or hello["kind"] == "import_error":
        how = child.end(kill=True)
        why = (f"could not import {part.file}:\n{hello['message']}" if hello
               else f"the process importing {part.file} {how}")
        return grading.not_run(index, why, status="error",
                               output=hello["output"] if hello else "")
    printed = hello["output"]  # printed while importing: shown under the first check reported
    while index < len(grading.checks):
        began = time.perf_counter()
        plan = grading.plans[index]
        limit = frame_timeout(request, plan, child.device_ready)
        try:
            frame = child.next_frame(limit)
        except FrameTimeout:
            why = (f"did not finish within {limit:g} s (an infinite loop, or far "
                   "more work than needed?); the rest of this part was not run")
            return _time_out(grading, child, index, why, grading.checks[index].id, began,
                             printed)
        if frame is None:
            how = child.end(kill=True)
            grading.result(index, Verdict(
                "failed", f"the process running your code {how} during this check "
                "(os._exit, a crash, or the memory cap?)"), time.perf_counter() - began,
                printed, "error")
            return index + 1
        verdict, status = _judge(plan, _with_baseline(frame, baselines.get(index)))
        grading.result(index, verdict, frame["duration_s"], printed + frame["output"], status)
        printed = ""
        index += 1
    child.end(kill=False)
    return index


def probe_once(request: Request, round_: Round, part: Part, plan: Plan) -> dict[str, Any]:
    """Run one probe (and its baseline) in fresh children: its frame, with the baseline folded
    in, or an error frame saying why none came (the import failed, the time ran out, the
    process died)."""
    grading_plans = [plan]
    baseline = None
    if plan.baseline is not None:
        child = _Child(request, round_, None, grading_plans, 0)
        try:
            baseline = child.next_frame(request.timeout_s)
        except FrameTimeout:
            baseline = None
        child.end(kill=True)
        baseline = baseline or dict(probe_frame("error", message="the reference did not run"))
    child = _Child(request, round_, part, grading_plans, 0)
    try:
        hello = child.next_frame(request.timeout_s)
        if hello is None or hello["kind"] == "import_error":
            how = child.end(kill=True)
            return dict(probe_frame("error", message=hello["message"] if hello
                                    else f"the process importing {part.file} {how}"))
        frame = child.next_frame(request.timeout_s)
    except FrameTimeout:
        child.end(kill=True)
        return dict(probe_frame("error", message=f"did not finish within "
                                f"{request.timeout_s:g} s"))
    how = child.end(kill=frame is None)
    if frame is None:
        return dict(probe_frame("error", message=f"the process running your code {how}"))
    return _with_baseline(frame, baseline)


def handle_followups(request: Request, round_: Round, emit: Emit) -> None:
    """Run each part's follow-up demonstration; emit its evidence (interpreted here, where no
    candidate code ran), then `done`."""
    from grader.followups import followup_for, plan_followup

    judge = load_module(round_, "checks")
    for part_id in request.parts:
        followup = followup_for(round_, part_id, request.flavor)
        if followup is None:
            continue
        plan, interpret = plan_followup(followup, judge, request.seed)
        frame = probe_once(request, round_, round_.part(part_id), plan)
        try:
            evidence = interpret(frame)
        except Exception as exc:  # noqa: BLE001 - odd data from odd candidate code
            evidence = {"status": "unavailable", "why": f"{type(exc).__name__}: {exc}"}
        emit({"type": "followup", "request": request.id, "part": part_id, "evidence": evidence})
    emit({"type": "done", "request": request.id})


def handle(request: Request, emit: Emit) -> None:
    """Grade one request, emitting part and check events, then `done`."""
    round_ = get_round(request.round)
    if request.kind == "followup":
        handle_followups(request, round_, emit)
        return
    graded: list[PartResult] = []
    for part_id in request.parts:
        part = round_.part(part_id)
        emit({"type": "part_start", "request": request.id, "part": part.id})
        results = grade_part(request, round_, part, graded)
        for result in results:
            emit({"type": "check", "request": request.id, "part": part.id,
                  "result": asdict(result)})
        graded.append(PartResult(part.id, part.title, results))
        emit({"type": "part_end", "request": request.id, "part": part.id})
    emit({"type": "done", "request": request.id})


def serve(stdin: TextIO, stdout: TextIO) -> None:
    """Answer requests (one JSON object per line) until stdin closes."""

    def emit(event: Event) -> None:
        stdout.write(json.dumps(event) + "\n")
        stdout.flush()

    import torch  # noqa: F401 - imported once here, inherited by every forked child

    torch.set_num_threads(1)
    emit({"type": "ready", "cuda": cuda_in_reach()})
    for line in stdin:
        if not line.strip():
            continue
        request_id = ""
        try:
            data = json.loads(line)
            request_id = str(data.get("id", ""))
            handle(Request.from_dict(data), emit)
        except Exception as exc:  # noqa: BLE001 - a grader bug must not kill the pool
            emit({"type": "fatal", "request": request_id,
                  "message": f"{type(exc).__name__}: {exc}", "trace": traceback.format_exc()})


if __name__ == "__main__":
    serve(sys.stdin, sys.stdout)
