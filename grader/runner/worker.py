"""The warm worker: imports torch and numpy once, then grades requests read from stdin.

For each part of a request it builds the checks' plans, forks a child (runner.child) that
imports the candidate's file and runs the probes, and judges each observation here, where no
candidate code has run. A child that hangs is killed at the per-check timeout and the part's
remaining checks are reported as not run; a child that dies mid-check costs that check only (a
fresh child picks up from the next one). Events go to stdout as JSON lines.

Run as `python -m grader.runner.worker`.
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

from grader.checks import checks_for
from grader.checks.base import Check, Context, Plan, Verdict, skipped
from grader.parts import Part, get_part
from grader.results import CheckResult
from grader.runner.child import run_child
from grader.runner.protocol import LAST_WORDS_SIGNAL, FrameTimeout, Request, read_frame

Emit = Callable[[dict[str, Any]], None]
LAST_WORDS_GRACE_S = 0.5  # how long a hung child may take to send what it printed
DEVICE_SETUP_S = 30.0  # allowed on top of the timeout to a probe that sets up CUDA


def device_in_reach(request: Request) -> bool:
    """Whether a probe that uses the device will find CUDA. torch asks NVML here (the worker
    runs with PYTORCH_NVML_BASED_CUDA_CHECK=1), so the worker never initialises CUDA itself and
    its forked children still can."""
    if request.flavor != "torch" or request.device == "cpu":
        return False
    import torch

    return bool(torch.cuda.is_available())


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


def frame_timeout(request: Request, plan: Plan, device_ready: bool) -> float:
    """How long one probe may take: the request's timeout, plus time to set up CUDA for a probe
    that uses the device when there is one (context creation alone can take seconds)."""
    return request.timeout_s + (DEVICE_SETUP_S if plan.uses_device and device_ready else 0.0)


def scale_to_weight(results: list[CheckResult], weight: float) -> None:
    """Share a part's weight among its checks in proportion to their points.

    A check that cannot apply on this machine (GPU timing without a GPU) enters with max_score
    0, so its share goes to the checks that did run and a perfect part still scores its full
    weight; a check skipped because the code hid what it measures, or not run after a hang or
    a crash, keeps its share and earns nothing.
    """
    total = sum(r.max_score for r in results)
    factor = weight / total if total else 0.0
    for r in results:
        r.score *= factor
        r.max_score *= factor


class _Child:
    """A forked child running plans[start:] and the read end of its pipe."""

    def __init__(self, request: Request, part: Part, plans: list[Plan], start: int,
                 device_ready: bool = False) -> None:
        read_fd, write_fd = os.pipe()
        worker_pid = os.getpid()
        pid = os.fork()
        if pid == 0:
            os.close(read_fd)
            run_child(write_fd, Path(request.root), part, request.flavor, plans, start,
                      request.memory_mb, worker_pid, device_ready)
        os.close(write_fd)
        self.pid, self.fd, self.device_ready = pid, read_fd, device_ready

    def next_frame(self, timeout_s: float) -> dict[str, Any] | None:
        """The next frame; a malformed one reads as an error frame, not a worker crash."""
        try:
            frame = read_frame(self.fd, time.monotonic() + timeout_s)
        except FrameTimeout:
            raise
        except Exception as exc:  # noqa: BLE001 - whatever the child wrote, the worker goes on
            return {"kind": "error", "index": -1, "duration_s": 0.0, "output": "",
                    "message": f"unreadable result from the child process: {exc}"}
        if frame is not None and not isinstance(frame, dict):
            return {"kind": "error", "index": -1, "duration_s": 0.0, "output": "",
                    "message": "unreadable result from the child process"}
        return frame

    def last_words(self, grace_s: float = LAST_WORDS_GRACE_S) -> str:
        """What a hung child printed since its last frame, asked for before it is killed;
        "" when it cannot answer within the grace (stuck in C code, or its handler replaced)."""
        try:
            os.kill(self.pid, LAST_WORDS_SIGNAL)
            frame = read_frame(self.fd, time.monotonic() + grace_s)
        except Exception:  # noqa: BLE001 - gone, silent or garbled: nothing to add
            return ""
        if isinstance(frame, dict) and frame.get("kind") == "last_words":
            return str(frame.get("output", ""))
        return ""

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


def _result(check: Check, max_score: float, verdict: Verdict, duration: float,
            output: str, status: str | None = None) -> CheckResult:
    final = status or verdict.status
    if final == "skipped" and status is None and verdict.not_applicable:
        max_score = 0.0
    score = max_score * (1.0 if final == "passed" else verdict.fraction if final == "failed"
                         else 0.0)
    return CheckResult(
        id=check.id, title=check.title, status=final,  # type: ignore[arg-type]
        score=score, max_score=max_score, message=verdict.message, hint=verdict.hint,
        duration_s=duration, output=output,
    )


def _judge(plan: Plan, frame: dict[str, Any]) -> tuple[Verdict, str | None]:
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
                       "Fill in the stub, then run the check again."), None
    if kind == "fault":
        return Verdict("failed", frame["message"]), None
    return Verdict("failed", frame["message"]), "error"


def grade_part(request: Request, part: Part) -> list[CheckResult]:
    """Grade every check of one part; the results' points add up to the part's weight."""
    checks = checks_for(part.id, request.flavor)
    plans = [c.plan(Context(request.seed, request.flavor, c.id, request.device,
                            request.timeout_s)) for c in checks]
    device_ready = any(p.uses_device for p in plans) and device_in_reach(request)
    with device_turn(device_ready):
        results = run_plans(request, part, checks, plans, device_ready)
    scale_to_weight(results, (request.weights or {}).get(part.id, part.weight))
    return results


def run_plans(request: Request, part: Part, checks: list[Check], plans: list[Plan],
              device_ready: bool = False) -> list[CheckResult]:
    """Run every plan in children (a fresh one after each crash); one result per check."""
    results: list[CheckResult] = []
    points = [c.points for c in checks]
    index = 0
    while index < len(checks):
        child = _Child(request, part, plans, index, device_ready)
        index = _collect(request, part, checks, plans, points, child, index, results.append)
    return results


def _not_run(checks: list[Check], points: list[float], start: int, why: str,
             emit_check: Callable[[CheckResult], None], status: str = "skipped",
             output: str = "") -> int:
    """Report checks[start:] with one reason (the printed output goes with the first)."""
    for i in range(start, len(checks)):
        emit_check(_result(checks[i], points[i], Verdict("failed", why), 0.0,
                           output if i == start else "", status))
    return len(checks)


def _time_out(child: _Child, checks: list[Check], points: list[float], index: int, why: str,
              what: str, began: float, output: str,
              emit_check: Callable[[CheckResult], None]) -> int:
    """Kill a child that hung in checks[index] (or in `what` before it); the part's remaining
    checks are not run, so a hang costs one timeout per part, not one per check."""
    output += child.last_words()
    child.end(kill=True)
    emit_check(_result(checks[index], points[index], Verdict("failed", why),
                       time.perf_counter() - began, output, "timeout"))
    return _not_run(checks, points, index + 1, f"not run: {what} timed out", emit_check)


def _collect(request: Request, part: Part, checks: list[Check], plans: list[Plan],
             points: list[float], child: _Child, index: int,
             emit_check: Callable[[CheckResult], None]) -> int:
    """Read one child's frames; return the index of the first check still to run."""
    began = time.perf_counter()
    try:
        hello = child.next_frame(request.timeout_s)
    except FrameTimeout:
        why = (f"importing {part.file} did not finish within {request.timeout_s:g} s "
               "(a loop or a long computation at module level?)")
        return _time_out(child, checks, points, index, why, "importing the part", began, "",
                         emit_check)
    if hello is None or hello["kind"] == "import_error":
        how = child.end(kill=True)
        why = (f"could not import {part.file}:\n{hello['message']}" if hello
               else f"the process importing {part.file} {how}")
        return _not_run(checks, points, index, why, emit_check, status="error",
                        output=hello["output"] if hello else "")
    printed = hello["output"]  # printed while importing: shown under the first check reported
    while index < len(checks):
        began = time.perf_counter()
        limit = frame_timeout(request, plans[index], child.device_ready)
        try:
            frame = child.next_frame(limit)
        except FrameTimeout:
            why = (f"did not finish within {limit:g} s (an infinite loop, or far "
                   "more work than needed?); the rest of this part was not run")
            return _time_out(child, checks, points, index, why, checks[index].id, began,
                             printed, emit_check)
        if frame is None:
            how = child.end(kill=True)
            emit_check(_result(checks[index], points[index], Verdict(
                "failed", f"the process running your code {how} during this check "
                "(os._exit, a crash, or the memory cap?)"), time.perf_counter() - began,
                printed, "error"))
            return index + 1
        verdict, status = _judge(plans[index], frame)
        emit_check(_result(checks[index], points[index], verdict, frame["duration_s"],
                           printed + frame["output"], status))
        printed = ""
        index += 1
    child.end(kill=False)
    return index


def probe_once(request: Request, part: Part, plan: Plan) -> dict[str, Any]:
    """Run one probe in a fresh child that imported the part: its frame, or an error frame
    saying why none came (the import failed, the time ran out, the process died)."""
    child = _Child(request, part, [plan], 0)
    try:
        hello = child.next_frame(request.timeout_s)
        if hello is None or hello["kind"] == "import_error":
            how = child.end(kill=True)
            return {"kind": "error", "message": hello["message"] if hello
                    else f"the process importing {part.file} {how}"}
        frame = child.next_frame(request.timeout_s)
    except FrameTimeout:
        child.end(kill=True)
        return {"kind": "error", "message": f"did not finish within {request.timeout_s:g} s"}
    how = child.end(kill=frame is None)
    return frame if frame is not None else {
        "kind": "error", "message": f"the process running your code {how}"}


def _not_graded(data: Any) -> Verdict:
    return skipped("a follow-up demonstration is not graded")


def handle_followups(request: Request, emit: Emit) -> None:
    """Run each part's follow-up demonstration; emit its evidence (interpreted here, where no
    candidate code ran), then `done`."""
    from grader.followups import followup_for

    for part_id in request.parts:
        followup = followup_for(part_id, request.flavor)
        if followup is None:
            continue
        frame = probe_once(request, get_part(part_id), Plan(followup.probe, _not_graded))
        try:
            evidence = followup.interpret(frame)
        except Exception as exc:  # noqa: BLE001 - odd data from odd candidate code
            evidence = {"status": "unavailable", "why": f"{type(exc).__name__}: {exc}"}
        emit({"type": "followup", "request": request.id, "part": part_id, "evidence": evidence})
    emit({"type": "done", "request": request.id})


def handle(request: Request, emit: Emit) -> None:
    """Grade one request, emitting part and check events, then `done`."""
    if request.kind == "followup":
        handle_followups(request, emit)
        return
    for part_id in request.parts:
        part = get_part(part_id)
        emit({"type": "part_start", "request": request.id, "part": part.id})
        for result in grade_part(request, part):
            emit({"type": "check", "request": request.id, "part": part.id,
                  "result": asdict(result)})
        emit({"type": "part_end", "request": request.id, "part": part.id})
    emit({"type": "done", "request": request.id})


def serve(stdin: TextIO, stdout: TextIO) -> None:
    """Answer requests (one JSON object per line) until stdin closes."""

    def emit(event: dict[str, Any]) -> None:
        stdout.write(json.dumps(event) + "\n")
        stdout.flush()

    import torch  # noqa: F401 - imported once here, inherited by every forked child

    torch.set_num_threads(1)
    emit({"type": "ready"})
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
