"""The runner: the only code that starts processes which run candidate code.

The CLI process stays light (no torch). `run_request` starts one warm worker
(`python -m grader.runner.worker`), which imports torch once and forks a child per part;
`WorkerPool` keeps several such workers for batch grading.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterable
from dataclasses import asdict, replace
from pathlib import Path
from typing import IO, Any

from grader.results import CheckResult, PartResult, RunResult
from grader.rounds import get_round
from grader.runner.protocol import Request
from grader.secret import SECRET_ENV

__all__ = ["GraderCrash", "Request", "Worker", "run_request"]

OnCheck = Callable[[str, CheckResult], None]
OnPart = Callable[[PartResult], None]


class GraderCrash(Exception):
    """The worker itself failed (a grader bug or a broken install), not the candidate's code."""


def _worker_environment() -> dict[str, str]:
    """The worker must import the same grader as this process (a checkout, a worktree, an
    install), whatever folder the command was started from."""
    env = dict(os.environ)
    # The instructor's secret is mixed into the seed in this process; the code under test runs
    # in the worker's children and must not be able to read it.
    env.pop(SECRET_ENV, None)
    # Children are forked from the worker and may time on CUDA, so nothing in the worker may
    # initialise CUDA: with this, even torch.cuda.is_available() asks NVML instead.
    env.setdefault("PYTORCH_NVML_BASED_CUDA_CHECK", "1")
    source = str(Path(__file__).resolve().parents[2])
    env["PYTHONPATH"] = os.pathsep.join(p for p in (source, env.get("PYTHONPATH")) if p)
    return env


class Worker:
    """One warm worker process and the requests it has answered."""

    def __init__(self) -> None:
        # A file, not a pipe: nobody reads stderr until the end, and a full pipe would block.
        self._stderr = tempfile.TemporaryFile(mode="w+")
        self.process = subprocess.Popen(
            [sys.executable, "-P", "-m", "grader.runner.worker"], env=_worker_environment(),
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self._stderr,
            text=True, bufsize=1,
        )
        self.cuda = bool(self._expect("ready").get("cuda"))

    def _events(self) -> Iterable[dict[str, Any]]:
        stdout: IO[str] = self.process.stdout  # type: ignore[assignment]
        for line in stdout:
            yield json.loads(line)
        self.process.wait()
        self._stderr.seek(0)
        err = self._stderr.read()
        raise GraderCrash(f"the grading worker stopped unexpectedly:\n{err.strip()[-2000:]}")

    def _expect(self, kind: str) -> dict[str, Any]:
        for event in self._events():
            if event["type"] == kind:
                return event
        raise GraderCrash(f"the grading worker never said {kind}")

    def _replies(self, request: Request) -> Iterable[dict[str, Any]]:
        """Send one request; its events up to (not including) `done`."""
        stdin: IO[str] = self.process.stdin  # type: ignore[assignment]
        stdin.write(json.dumps(asdict(request)) + "\n")
        stdin.flush()
        for event in self._events():
            if event.get("request") != request.id:
                continue
            if event["type"] == "fatal":
                raise GraderCrash(f"{event['message']}\n{event.get('trace', '')}")
            if event["type"] == "done":
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
