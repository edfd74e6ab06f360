"""Fixtures: one warm grading worker for the whole session, work started ahead, and workspaces
built from data.

Starting a worker imports torch (a second or two); grading a part in it costs a fork. So the
tests share one worker. What cannot share it is started ahead, at the start of the session, in
two background threads, while the tests run (most of them use one core at a time, the machine
has two): in one, the known-solution matrix, graded by a pool of warm workers; in the other, one
after another in the order the tests will want them, the jobs that modules name in `AHEAD`
(end-to-end runs of the real command in processes of their own, see helpers.Job). A test that
wants a job's result waits for it; the modules that wait run after those that need nothing
started ahead, and the modules that read the matrix run last.
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
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
    Job,
    LentWorker,
    Solution,
    all_solutions,
    write_workspace,
)

MATRIX_JOBS = 2
MATRIX_MODULES = ("test_solutions.py", "test_hostile.py")


class Ahead:
    """Jobs run in two background threads, each job once, in the order submitted: the first
    job holds one thread for as long as it runs, the others take turns in the second."""

    def __init__(self, tmp: pytest.TempPathFactory) -> None:
        tmp.getbasetemp()  # made here, once: made lazily, two threads could each make one
        self._tmp = tmp
        self._thread = ThreadPoolExecutor(2, thread_name_prefix="ahead")
        self._futures: dict[Job, Future[object]] = {}

    def submit(self, job: Job) -> Future[object]:
        if job not in self._futures:
            self._futures[job] = self._thread.submit(job, self._tmp)
        return self._futures[job]

    def result(self, job: Job) -> object:
        """The job's result (submitted now if nobody did), or what it raised."""
        return self.submit(job).result()

    def close(self) -> None:
        for future in self._futures.values():
            future.cancel()
        self._thread.shutdown(wait=True)


class Grading:
    """Grades workspaces through one long-lived worker, and runs what was started ahead."""

    def __init__(self, tmp: pytest.TempPathFactory) -> None:
        self._tmp = tmp
        self._worker: Worker | None = None
        self._ids = itertools.count()
        self._graded: dict[tuple[str, str], RunResult] = {}
        self._pool: WorkerPool | None = None
        self._matrix: Future[object] | None = None
        self.ahead = Ahead(tmp)

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
        """Grade every (solution, flavor) of tests/solutions in a pool, ahead. Every round's
        checks are loaded here, in the calling thread: loading them imports torch, and a module
        still being imported by another thread when a test forks a child here would stay locked
        in that child for good."""
        solutions = all_solutions()
        for round_ in {solution.round for solution in solutions}:
            round_checks(round_)

        def grade(_tmp: pytest.TempPathFactory) -> None:
            pending, requests = {}, []
            for solution in solutions:
                for flavor in solution.flavors:
                    requests.append(self._solution_request(solution, flavor))
                    pending[requests[-1].id] = (solution.key, flavor)
            self._pool = WorkerPool(MATRIX_JOBS)
            for event in self._pool.grade(requests):
                if isinstance(event, RequestDone):
                    key = pending[event.request_id]
                    if event.result is None:
                        raise RuntimeError(f"{key}: the grader failed: {event.error}")
                    self._graded[key] = event.result

        self._matrix = self.ahead.submit(grade)

    def solution(self, solution: Solution, flavor: str) -> RunResult:
        """A solution folder graded in one flavor (from the matrix, once it is done)."""
        key = (solution.key, flavor)
        if self._matrix is None:
            self.start_matrix()
        assert self._matrix is not None
        self._matrix.result()
        if key not in self._graded:
            self._graded[key] = self.worker.run(self._solution_request(solution, flavor))
        return self._graded[key]

    def close(self) -> None:
        if self._pool is not None:  # a matrix still grading (the session ended early) stops
            self._pool.close(kill=True)
        self.ahead.close()
        if self._worker is not None:
            self._worker.close()


@pytest.fixture(scope="session", autouse=True)
def grading(request: pytest.FixtureRequest,
            tmp_path_factory: pytest.TempPathFactory) -> Iterator[Grading]:
    """The session's grading; what the collected tests will want is started ahead: the matrix
    first (the longest), then the modules' jobs in the order their tests will want them."""
    session = Grading(tmp_path_factory)
    modules = dict.fromkeys(item.module for item in request.session.items
                            if getattr(item, "module", None) is not None)
    if any(Path(module.__file__).name in MATRIX_MODULES for module in modules):
        session.start_matrix()
    for module in modules:
        for job in getattr(module, "AHEAD", ()):
            session.ahead.submit(job)
    yield session
    session.close()


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The modules that wait for work started ahead run after those that need none, and those
    that read the matrix last, so that the others run while it is done."""
    items.sort(key=lambda item: (item.path.name in MATRIX_MODULES,
                                 bool(getattr(getattr(item, "module", None), "AHEAD", ()))))


@pytest.fixture
def runner(grading: Grading, monkeypatch: pytest.MonkeyPatch) -> CliRunner:
    """A CliRunner whose `grader check` grades in the session's worker, a plain one whatever
    sandbox the command asks for (a module may lend another worker under the same name; the
    sandboxed path is run for real by the tests that start the command as a process)."""
    monkeypatch.setattr(grader.runner, "Worker", lambda **_: LentWorker(grading.worker))
    return CliRunner(env={"COLUMNS": "120"})
