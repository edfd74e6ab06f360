"""The developer self-check: the stubs and the checks still agree with each other.

Whoever edits a stub, a reference or a check runs `grader selfcheck` to prove, in both flavors,
that every pristine stub fails every check (a check a stub passes checks nothing) and that
every reference solution passes every check (a check the reference fails is wrong, or flaky).
Both are graded exactly as candidates are, through the runner, from temporary workspaces, so
a broken import path or a stub that no longer renders shows up here too.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from grader.parts import FLAVORS, PART_IDS, PARTS
from grader.references import reference_file
from grader.results import RunResult
from grader.runner.pool import RequestDone, WorkerPool
from grader.runner.protocol import Request
from grader.workspace import EXERCISES_DIR, pristine_files

Source = Literal["stubs", "references"]
SOURCES: tuple[Source, ...] = ("stubs", "references")


@dataclass(frozen=True)
class Violation:
    """One check that disagrees with the rule for its source."""

    flavor: str
    source: Source
    check_id: str
    status: str
    message: str


@dataclass
class SelfcheckReport:
    """Every graded run, keyed by (flavor, source), and what broke the rules."""

    seed: int
    runs: dict[tuple[str, Source], RunResult] = field(default_factory=dict)
    violations: list[Violation] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.violations


def write_exercises(folder: Path, flavor: str, source: Source) -> Path:
    """A temporary workspace root whose exercises/ holds the stubs or the references."""
    exercises = folder / EXERCISES_DIR
    exercises.mkdir(parents=True)
    for name, text in pristine_files(flavor).items():
        (exercises / name).write_text(text)
    if source == "references":
        for part in PARTS:
            shutil.copyfile(reference_file(part, flavor), exercises / part.file)
    return folder


def violations(flavor: str, source: Source, result: RunResult) -> list[Violation]:
    """Stubs must earn nothing on every check; references must pass every check (a skip
    proves nothing, so it is a violation for a reference too, unless the check cannot apply on
    this machine at all, like GPU timing without CUDA)."""
    found = []
    for part in result.parts:
        if not part.checks:
            found.append(Violation(flavor, source, part.id, "missing",
                                   "this part has no checks in this flavor"))
        for check in part.checks:
            bad = (check.status == "passed" or check.score > 0) if source == "stubs" \
                else not (check.status == "passed" or check.not_applicable)
            if bad:
                found.append(Violation(flavor, source, check.id, check.status,
                                       check.message.splitlines()[0] if check.message else ""))
    return found


def run_selfcheck(flavors: Sequence[str] = FLAVORS, seed: int = 0, timeout_s: float = 10.0,
                  jobs: int = 2, on_run: Callable[[str, Source, RunResult | None], None]
                  | None = None) -> SelfcheckReport:
    """Grade the stubs and the references of each flavor and collect every violation."""
    report = SelfcheckReport(seed)
    with tempfile.TemporaryDirectory(prefix="grader-selfcheck-") as tmp:
        jobs_by_id: dict[str, tuple[str, Source]] = {}
        requests = []
        for flavor in flavors:
            for source in SOURCES:
                request_id = f"{flavor}-{source}"
                root = write_exercises(Path(tmp) / request_id, flavor, source)
                jobs_by_id[request_id] = (flavor, source)
                requests.append(Request(id=request_id, root=str(root), flavor=flavor,
                                        parts=list(PART_IDS), seed=seed, timeout_s=timeout_s))
        with WorkerPool(max(1, min(jobs, len(requests)))) as pool:
            for event in pool.grade(requests):
                if not isinstance(event, RequestDone):
                    continue
                flavor, source = jobs_by_id[event.request_id]
                if event.result is None:
                    report.violations.append(Violation(flavor, source, "(all)", "error",
                                                       event.error or "the grader failed"))
                else:
                    report.runs[(flavor, source)] = event.result
                    report.violations += violations(flavor, source, event.result)
                if on_run:
                    on_run(flavor, source, event.result)
    return report
