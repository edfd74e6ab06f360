"""Fixtures: one warm grading worker for the whole session, and workspaces built from data.

Starting a worker imports torch (a second or two); grading a part in it costs a fork. So the
buggy-solution matrix shares one worker, and each (solution, flavor) is graded once and the
result reused by every test that asks about it.
"""

from __future__ import annotations

import itertools
import os
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

# Ask NVML whether CUDA is there, so that no test process initialises CUDA before it forks.
os.environ.setdefault("PYTORCH_NVML_BASED_CUDA_CHECK", "1")

from grader.results import RunResult  # noqa: E402
from grader.runner import Request, Worker

from helpers import TEST_SEED, TEST_TIMEOUT_S, Solution, write_workspace


class Grading:
    """Grades workspaces through one long-lived worker."""

    def __init__(self, tmp: pytest.TempPathFactory) -> None:
        self._tmp = tmp
        self._worker: Worker | None = None
        self._ids = itertools.count()
        self._graded: dict[tuple[str, str], RunResult] = {}
        self.seconds: dict[tuple[str, str], float] = {}

    @property
    def worker(self) -> Worker:
        """Started on first use and never silently replaced: if candidate code ever took the
        worker down, every later test should say so."""
        if self._worker is None:
            self._worker = Worker()
        return self._worker

    def run(self, root: Path, flavor: str, parts: tuple[str, ...] | list[str], *,
            seed: int = TEST_SEED, timeout_s: float = TEST_TIMEOUT_S,
            memory_mb: int = 2048, device: str = "cpu") -> RunResult:
        """Grade through the shared worker. The device defaults to the CPU so that every
        verdict pinned in tests/solutions holds on any machine; tests/test_gpu.py grades on
        CUDA where there is one."""
        request = Request(id=f"test-{next(self._ids)}", root=str(root), flavor=flavor,
                          parts=list(parts), seed=seed, timeout_s=timeout_s,
                          memory_mb=memory_mb, device=device)
        return self.worker.run(request)

    def solution(self, solution: Solution, flavor: str) -> RunResult:
        """Grade a solution folder in one flavor (once per session; `seconds` keeps how long
        that took)."""
        key = (solution.name, flavor)
        if key not in self._graded:
            root = write_workspace(self._tmp.mktemp(f"{solution.name}-{flavor}"), flavor,
                                   solution.start, solution.files(flavor))
            began = time.monotonic()
            self._graded[key] = self.run(root, flavor, solution.parts,
                                         timeout_s=solution.timeout_s,
                                         memory_mb=solution.memory_mb)
            self.seconds[key] = time.monotonic() - began
        return self._graded[key]

    def close(self) -> None:
        if self._worker is not None:
            self._worker.close()


@pytest.fixture(scope="session")
def grading(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Grading]:
    session = Grading(tmp_path_factory)
    yield session
    session.close()

