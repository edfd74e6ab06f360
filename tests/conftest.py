"""Fixtures: one warm grading worker for the whole session, and workspaces built from data.

Starting a worker imports torch (a second or two); grading a part in it costs a fork. So the
tests share one worker, and the known-solution matrix is graded once, up front, by a pool of
warm workers side by side (the machine has two cores); every test that asks about a (solution,
flavor) reuses that result.
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

# Ask NVML whether CUDA is there, so that no test process initialises CUDA before it forks.
os.environ.setdefault("PYTORCH_NVML_BASED_CUDA_CHECK", "1")

from grader.checks.table import round_checks  # noqa: E402
from grader.secret import SECRET_ENV

# An instructor's secret in the developer's environment would change every seed a test pins.
os.environ.pop(SECRET_ENV, None)
import grader.runner
from grader.results import RunResult
from grader.rounds import DEFAULT_ROUND
from grader.runner import Request, Worker
from grader.runner.pool import RequestDone, WorkerPool

from helpers import (
    TEST_SEED,
    TEST_TIMEOUT_S,
    LentWorker,
    Solution,
    all_solutions,
    write_workspace,
)

MATRIX_JOBS = 2


class Grading:
    """Grades workspaces through one long-lived worker."""

    def __init__(self, tmp: pytest.TempPathFactory) -> None:
        self._tmp = tmp
        self._worker: Worker | None = None
        self._ids = itertools.count()
        self._graded: dict[tuple[str, str], RunResult] = {}

    @property
    def worker(self) -> Worker:
        """Started on first use and never silently replaced: if candidate code ever took the
        worker down, every later test should say so."""
        if self._worker is None:
            self._worker = Worker()
        return self._worker

    def request(self, root: Path, flavor: str, parts: tuple[str, ...] | list[str], *,
                round_id: str = DEFAULT_ROUND, seed: int = TEST_SEED,
                timeout_s: float = TEST_TIMEOUT_S, memory_mb: int = 2048,
                device: str = "cpu", informational: bool = True) -> Request:
        """A request as the CLI would build it. The device defaults to the CPU so that every
        verdict pinned in tests/solutions holds on any machine; tests/test_gpu.py grades on
        CUDA where there is one."""
        return Request(id=f"test-{next(self._ids)}", root=str(root), round=round_id,
                       flavor=flavor, parts=list(parts), seed=seed, timeout_s=timeout_s,
                       memory_mb=memory_mb, device=device, informational=informational)

    def run(self, root: Path, flavor: str, parts: tuple[str, ...] | list[str],
            **options: object) -> RunResult:
        """Grade through the shared worker."""
        return self.worker.run(self.request(root, flavor, parts, **options))  # type: ignore[arg-type]

    def _solution_request(self, solution: Solution, flavor: str) -> Request:
        """The request for a solution folder. Checks that cannot apply on this machine (GPU
        timing) are not run unless the folder pins one: their CPU figures are information."""
        root = write_workspace(self._tmp.mktemp(f"{solution.name}-{flavor}"), flavor,
                               solution.start, solution.files(flavor), solution.round)
        machine_bound = {c.id for c in round_checks(solution.round) if c.needs}
        return self.request(root, flavor, solution.parts, round_id=solution.round.id,
                            timeout_s=solution.timeout_s, memory_mb=solution.memory_mb,
                            informational=any(e.check in machine_bound
                                              for e in solution.expect))

    def _grade_matrix(self) -> None:
        """Every (solution, flavor) of tests/solutions, graded side by side in a pool."""
        pending, requests = {}, []
        for solution in all_solutions():
            for flavor in solution.flavors:
                requests.append(self._solution_request(solution, flavor))
                pending[requests[-1].id] = (solution.key, flavor)
        with WorkerPool(MATRIX_JOBS) as pool:
            for event in pool.grade(requests):
                if isinstance(event, RequestDone):
                    key = pending[event.request_id]
                    if event.result is None:
                        raise RuntimeError(f"{key}: the grader failed: {event.error}")
                    self._graded[key] = event.result

    def solution(self, solution: Solution, flavor: str) -> RunResult:
        """A solution folder graded in one flavor (the whole matrix is graded on first use)."""
        key = (solution.key, flavor)
        if not self._graded:
            self._grade_matrix()
        if key not in self._graded:
            self._graded[key] = self.worker.run(self._solution_request(solution, flavor))
        return self._graded[key]

    def close(self) -> None:
        if self._worker is not None:
            self._worker.close()


@pytest.fixture(scope="session")
def grading(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Grading]:
    session = Grading(tmp_path_factory)
    yield session
    session.close()


@pytest.fixture
def runner(grading: Grading, monkeypatch: pytest.MonkeyPatch) -> CliRunner:
    """A CliRunner whose `grader check` grades in the session's worker (a module may lend
    another worker under the same name)."""
    monkeypatch.setattr(grader.runner, "Worker", lambda: LentWorker(grading.worker))
    return CliRunner(env={"COLUMNS": "120"})
