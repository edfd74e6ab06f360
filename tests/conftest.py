"""Fixtures: one warm grading worker for the whole session, and workspaces built from data.

Starting a worker imports torch (a second or two); grading a part in it costs a fork. So the
tests share one worker, and the known-solution matrix is graded once by a pool of warm workers,
in the background from the start of the session while the other tests run (most of them use one
core at a time, the machine has two); every test that asks about a (solution, flavor) waits for
that batch and reuses its result.
"""

from __future__ import annotations

import itertools
import os
import threading
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
        self._matrix: threading.Thread | None = None
        self._matrix_error: BaseException | None = None
        self._pool: WorkerPool | None = None

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
        timing) are not run unless the folder pins one in this flavor: their CPU figures are
        information."""
        root = write_workspace(self._tmp.mktemp(f"{solution.name}-{flavor}"), flavor,
                               solution.start, solution.files(flavor), solution.round)
        machine_bound = {c.id for c in round_checks(solution.round) if c.needs}
        return self.request(root, flavor, solution.parts, round_id=solution.round.id,
                            timeout_s=solution.timeout_s, memory_mb=solution.memory_mb,
                            informational=any(e.check in machine_bound and flavor in e.flavors
                                              for e in solution.expect))

    def start_matrix(self) -> None:
        """Grade every (solution, flavor) of tests/solutions in a pool, in a background
        thread; `solution` waits for it."""
        pending, requests = {}, []
        for solution in all_solutions():
            for flavor in solution.flavors:
                requests.append(self._solution_request(solution, flavor))
                pending[requests[-1].id] = (solution.key, flavor)

        def grade() -> None:
            try:
                for event in self._pool.grade(requests):
                    if isinstance(event, RequestDone):
                        key = pending[event.request_id]
                        if event.result is None:
                            raise RuntimeError(f"{key}: the grader failed: {event.error}")
                        self._graded[key] = event.result
            except BaseException as exc:  # noqa: BLE001 - reported by the tests that wait
                self._matrix_error = exc

        self._pool = WorkerPool(MATRIX_JOBS)
        self._matrix = threading.Thread(target=grade, name="solution-matrix", daemon=True)
        self._matrix.start()

    def solution(self, solution: Solution, flavor: str) -> RunResult:
        """A solution folder graded in one flavor (from the matrix, once it is done)."""
        key = (solution.key, flavor)
        if self._matrix is None:
            self.start_matrix()
        assert self._matrix is not None
        self._matrix.join()
        if self._matrix_error is not None:
            raise self._matrix_error
        if key not in self._graded:
            self._graded[key] = self.worker.run(self._solution_request(solution, flavor))
        return self._graded[key]

    def close(self) -> None:
        if self._pool is not None:
            self._pool.close(kill=True)
        if self._matrix is not None:
            self._matrix.join(timeout=10)
        if self._worker is not None:
            self._worker.close()


MATRIX_MODULES = ("test_solutions.py", "test_hostile.py")


@pytest.fixture(scope="session", autouse=True)
def grading(request: pytest.FixtureRequest,
            tmp_path_factory: pytest.TempPathFactory) -> Iterator[Grading]:
    """The session's grading; the solution matrix starts at once when a test will need it."""
    session = Grading(tmp_path_factory)
    if any(item.path.name in MATRIX_MODULES for item in request.session.items):
        session.start_matrix()
    yield session
    session.close()


@pytest.fixture
def runner(grading: Grading, monkeypatch: pytest.MonkeyPatch) -> CliRunner:
    """A CliRunner whose `grader check` grades in the session's worker (a module may lend
    another worker under the same name)."""
    monkeypatch.setattr(grader.runner, "Worker", lambda: LentWorker(grading.worker))
    return CliRunner(env={"COLUMNS": "120"})
