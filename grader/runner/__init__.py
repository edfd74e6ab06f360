"""The runner: the only code that starts processes which run candidate code.

The CLI process stays light (no torch). `run_request` starts one warm worker
(`python -m grader.runner.start`), which imports torch once and forks a child per part;
`WorkerPool` keeps several such workers for batch grading.
"""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import IO, Any

from grader.engine.results import CheckResult, PartResult, RunResult
from grader.engine.rounds import get_round
from grader.engine.secret import SECRET_ENV
from grader.runner import memory, strays
from grader.runner.children import BACKSTOP, TreeWatch, wait_readable
from grader.runner.process_env import grading_environment
from grader.runner.protocol import Event, FrameTimeout, Request, received_event

__all__ = ["GraderCrash", "OutOfMemory", "Request", "Worker", "run_request"]

OnCheck = Callable[[str, CheckResult], None]
OnPart = Callable[[PartResult], None]


class GraderCrash(Exception):
    """The worker itself failed (a grader bug or a broken install), not the candidate's code."""

    @property
    def report(self) -> str:
        """What a command says of it to the person running it."""
        return f"the grader itself failed; please report this:\n{self}"


class OutOfMemory(GraderCrash):
    """The kernel's out-of-memory killer ended the worker: the machine failed (too little
    memory for all it runs, or a container's limit), not the grader nor the code under test."""

    def __init__(self, process: str) -> None:
        room = memory.room()
        super().__init__(
            f"the machine ran out of memory: the kernel's out-of-memory killer ended {process}"
            f"{f' ({room})' if room else ''}, and nothing it did was kept. Free some memory "
            "(close programs, raise the container's memory limit, or grade fewer submissions at "
            "once with --jobs) and run it again.")

    @property
    def report(self) -> str:
        return str(self)


def _worker_environment() -> dict[str, str]:
    """The worker must import the same grader as this process (a checkout, a worktree, an
    install), whatever folder the command was started from, in the environment every grading
    process has (process_env)."""
    env = grading_environment(dict(os.environ))
    # The instructor's secret is mixed into the seed in this process; the code under test runs
    # in the worker's children and must not be able to read it.
    env.pop(SECRET_ENV, None)
    source = str(Path(__file__).resolve().parents[2])
    env["PYTHONPATH"] = os.pathsep.join(p for p in (source, env.get("PYTHONPATH")) if p)
    return env


STARTUP_SILENCE_S = 120.0
"""How long a starting worker may take to say it is ready (it imports torch), counted as the
silences below are."""
WATCHDOG_SLACK_S = 90.0
"""How long past a request's per-check timeout a worker may go without an event (it sends one
whenever a child's frame arrives, and about once a second while a child runs or waits for a
CPU) before it is taken for stopped or wedged and killed. Starting a sandbox, which imports
torch, is the longest silence that is not a fault. A silence is counted as work, not on the
clock (children.wait_readable): the CPU time the worker's process tree uses and the time it
sits idle; a worker starved by a busy machine is waited for up to BACKSTOP times as long."""
SILENCE_WORDS = {
    "cpu": "used {limit:g} s of CPU without a word (wedged in a loop?)",
    "idle": "sat idle for {limit:g} s without a word (stopped or wedged)",
    "wall": "got too little CPU to say anything within {backstop:g} s on the clock (the "
            "machine was too busy)",
    "clock": "said nothing for {limit:g} s on the clock (stopped or wedged)",
}


@dataclass(frozen=True)
class _Continued(TreeWatch):
    """A process tree waited for whose processes found stopped by a signal are continued at
    each look (strays.work_usage says why)."""

    def usage(self) -> strays.Usage | None:
        return strays.tree_usage(self.pid, resume=True)


class _Lines:
    """Lines from the worker's stdout, each within a limit on the work of the worker's process
    tree (a file object's readline cannot time out). A process of the tree found stopped by a
    signal (the code under test stopping its parent, in practice mode; a tool that pauses
    processes) is continued at each look, as the worker continues its children's: the grading
    goes on, and the code is judged on what else it does. One a tracer holds stays as it is."""

    def __init__(self, fd: int, pid: int) -> None:
        self.fd = fd
        self.buffer = b""
        self._watch = _Continued(fd, pid)

    def next(self, limit_s: float) -> bytes | None:
        """The next whole line; None at end of file; TimeoutError(why) when none came within
        limit_s of the tree's work (see wait_readable: "cpu", "idle", "wall" or "clock")."""
        while b"\n" not in self.buffer:
            ready, _, _ = select.select([self.fd], [], [], 0.0)
            if not ready:
                try:
                    wait_readable(self._watch, limit_s)
                except FrameTimeout as exc:
                    raise TimeoutError(exc.why) from None
            chunk = os.read(self.fd, 1 << 16)
            if not chunk:
                return None
            self.buffer += chunk
        line, _, self.buffer = self.buffer.partition(b"\n")
        return line


class Worker:
    """One warm worker process and the requests it has answered. `sandbox`: the worker runs
    each request's candidate code in a bubblewrap sandbox of its own (grader.runner.sandbox);
    otherwise in children it forks itself. `first`: the request that will come first, whose
    sandbox the worker then starts at once, while it imports torch itself. A worker process
    that retires after a request (DoneEvent.retire: the code it ran changed its limits for
    good) is replaced by a fresh one before the next, so no request meets what an earlier
    submission's code did to it."""

    def __init__(self, sandbox: bool = False, first: Request | None = None) -> None:
        # The code under test runs as this user: this process, which believes the worker's
        # stdout, must not be open to it through /proc/<pid>/fd.
        strays.set_dumpable(False)
        self._sandbox = sandbox
        self._retired = False
        self._start(first)

    def _start(self, first: Request | None) -> None:
        self._oom_kills = memory.oom_kills()
        self._killed = False  # by this process: a SIGKILL from elsewhere may be the kernel's
        # A file, not a pipe: nobody reads stderr until the end, and a full pipe would block.
        self._stderr = tempfile.TemporaryFile(mode="w+")
        options = ["--sandbox", *([json.dumps(asdict(first))] if first else [])] \
            if self._sandbox else []
        # In "/": every path a request names is absolute, and the command's own folder may be
        # gone (deleted while a shell still stands in it), where native libraries fail to load.
        self.process = strays.retried(lambda: subprocess.Popen(
            [sys.executable, "-P", "-m", "grader.runner.start", *options],
            env=_worker_environment(), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=self._stderr, cwd="/",
        ))
        strays.own(self.process.pid)
        self._lines = _Lines(self.process.stdout.fileno(),  # type: ignore[union-attr]
                             self.process.pid)
        try:
            self.cuda = bool(self._expect("ready", STARTUP_SILENCE_S).get("cuda"))
        except BaseException:
            # Nobody holds this worker yet, so no `with` will close it: a Ctrl-C (or a crash)
            # while it imports torch must not leave it running.
            self.kill()
            self.close()
            raise

    def _events(self, silence_s: float) -> Iterable[Event]:
        """The worker's events, until it stops (GraderCrash); a worker silent for silence_s
        (stopped or wedged, by a bug or by the code under test) is killed (GraderCrash)."""
        while True:
            try:
                line = self._lines.next(silence_s)
            except TimeoutError as exc:
                seen = strays.describe_tree(self.process.pid)
                self.kill()
                words = SILENCE_WORDS[str(exc)].format(limit=silence_s,
                                                       backstop=BACKSTOP * silence_s)
                raise GraderCrash(f"the grading worker {words} and was killed (its processes "
                                  f"then: {seen or 'gone'})") from None
            if line is None:
                break
            try:
                event = received_event(json.loads(line))
            except ValueError as exc:  # json.JSONDecodeError is one
                self.kill()
                raise GraderCrash(f"the grading worker sent what is not an event ({exc}) and "
                                  "was killed") from None
            yield event
        self.process.wait()
        if self.process.returncode == -signal.SIGKILL and not self._killed and \
                memory.killed_for_memory(self._oom_kills, memory.oom_kills()):
            raise OutOfMemory("the grading worker")
        self._stderr.seek(0)
        err = self._stderr.read()
        how = strays.describe_returncode(self.process.returncode)
        raise GraderCrash(f"the grading worker stopped unexpectedly ({how}):\n"
                          f"{err.strip()[-2000:]}")

    def _expect(self, kind: str, silence_s: float) -> Event:
        for event in self._events(silence_s):
            if event["type"] == kind:
                return event
        raise GraderCrash(f"the grading worker never said {kind}")

    def _replies(self, request: Request) -> Iterable[Event]:
        """Send one request (to a fresh worker process where the last one retired); its
        events up to (not including) `done`."""
        if self._retired:
            self.close()
            self._retired = False
            self._start(None)
        stdin: IO[bytes] = self.process.stdin  # type: ignore[assignment]
        stdin.write(json.dumps(asdict(request)).encode() + b"\n")
        stdin.flush()
        for event in self._events(request.timeout_s + WATCHDOG_SLACK_S):
            if event.get("request") != request.id:
                continue
            if event["type"] == "fatal":
                raise GraderCrash(f"{event['message']}\n{event.get('trace', '')}")
            if event["type"] == "done":
                self._retired = event["retire"]
                return
            yield event

    def run(self, request: Request, on_check: OnCheck | None = None,
            on_part: OnPart | None = None) -> RunResult:
        """Send one request and collect its results, calling on_check as each check arrives
        and on_part as each part finishes (Gradescope's partial results hang on that)."""
        result = RunResult(round=request.round, flavor=request.flavor, seed=request.seed)
        round_ = get_round(request.round)
        for event in self._replies(request):
            if event["type"] == "part_start":
                part = round_.part(event["part"])
                result.parts.append(PartResult(id=part.id, title=part.title))
            elif event["type"] == "check":
                check = CheckResult.from_wire(event["result"])
                result.parts[-1].checks.append(check)
                if on_check:
                    on_check(event["part"], check)
            elif event["type"] == "part_end" and on_part:
                on_part(result.parts[-1])
        return result

    def follow_up(self, request: Request) -> dict[str, dict[str, Any]]:
        """Run the follow-up demonstrations of request.parts: evidence by part."""
        followup = replace(request, kind="followup")
        return {e["part"]: e["evidence"] for e in self._replies(followup)
                if e["type"] == "followup"}

    def kill(self) -> None:
        """Stop the worker process at once (its forked children die with it, see child.py).

        Safe while another thread is waiting in `run`: that wait ends in GraderCrash, and the
        thread that owns the worker then closes it.
        """
        if self.process.poll() is None:
            self._killed = True
            self.process.kill()
            self.process.wait()

    def close(self) -> None:
        if self.process.poll() is None:
            if self.process.stdin:
                self.process.stdin.close()
            try:
                self.process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        strays.disown(self.process.pid)
        if self.process.stdout:
            self.process.stdout.close()
        self._stderr.close()

    def __enter__(self) -> Worker:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def run_request(request: Request, on_check: OnCheck | None = None) -> RunResult:
    """Grade one request in a fresh worker."""
    with Worker() as worker:
        return worker.run(request, on_check)
