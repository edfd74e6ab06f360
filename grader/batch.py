"""Batch grading: many submissions, one pool of warm workers, one row per submission.

Every submission is staged (grader.submissions), turned into a runner Request under the
instructor's settings (never the candidate's own grader.toml: a candidate must not be able to
change points, parts or flavor), and graded by a WorkerPool. A submission that cannot be staged
still gets a full row: every check of every enabled part reported as an error with the reason,
so the scores, the JSON and the Gradescope file all keep one shape.
"""

from __future__ import annotations

import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from grader.parts import get_part
from grader.results import CheckResult, PartResult, RunResult
from grader.runner.pool import CheckDone, PartDone, RequestDone, WorkerPool
from grader.runner.protocol import Request
from grader.submissions import Staged, expand, stage
from grader.workspace import Settings

DEFAULT_MEMORY_MB = 2048
NOTE_WIDTH = 160
RowStatus = Literal["graded", "broken", "error"]


@dataclass(frozen=True)
class GradingConfig:
    """How every submission of a batch is graded: the instructor's flavor and settings."""

    flavor: str
    settings: Settings
    seed: int
    timeout_s: float
    memory_mb: int = DEFAULT_MEMORY_MB

    @property
    def parts(self) -> list[str]:
        return list(self.settings.enabled)

    @property
    def weights(self) -> dict[str, float]:
        return {p: self.settings.weight(get_part(p)) for p in self.parts}

    @property
    def max_score(self) -> float:
        return sum(self.weights.values())

    def request(self, request_id: str, root: Path) -> Request:
        return Request(
            id=request_id, root=str(root), flavor=self.flavor, parts=self.parts,
            seed=self.seed, timeout_s=self.timeout_s, memory_mb=self.memory_mb,
            weights=self.weights,
        )


@dataclass
class Graded:
    """One submission's row: its parts (real results or stand-ins) and what to say about it."""

    path: str
    status: RowStatus
    parts: list[PartResult]
    max_score: float
    notes: list[str] = field(default_factory=list)
    result: RunResult | None = None

    @property
    def score(self) -> float:
        return sum(p.score for p in self.parts)

    @property
    def note(self) -> str:
        return "; ".join(self.notes)

    def part(self, part_id: str) -> PartResult | None:
        return next((p for p in self.parts if p.id == part_id), None)
    def to_dict(self) -> dict[str, Any]:
        """The documented per-submission `grade --json` shape."""
        return {
            "path": self.path,
            "score": round(self.score, 4),
            "max_score": round(self.max_score, 4),
            "parts": [p.to_dict() for p in self.parts],
        }


def unrun_parts(config: GradingConfig, message: str,
                finished: Sequence[PartResult] = ()) -> list[PartResult]:
    """The parts of a row that stopped early: those in `finished` as they were graded, every
    check of the others as an error carrying `message`."""
    from grader.checks import checks_for, scaled_points

    done = {p.id: p for p in finished}
    parts = []
    for part_id, weight in config.weights.items():
        if part_id in done:
            parts.append(done[part_id])
            continue
        part = get_part(part_id)
        checks = checks_for(part_id, config.flavor)
        parts.append(PartResult(part.id, part.title, [
            CheckResult(id=c.id, title=c.title, status="error", score=0.0, max_score=points,
                        message=message)
            for c, points in zip(checks, scaled_points(checks, weight), strict=True)
        ]))
    return parts


def _first_line_of_trouble(part: PartResult) -> str | None:
    """What stopped a part outright (an import error, a crash, a timeout), in one line."""
    if not part.checks or any(c.status == "passed" for c in part.checks):
        return None
    first = part.checks[0]
    if first.status not in ("error", "timeout"):
        return None
    lines = [line.strip() for line in first.message.splitlines() if line.strip()]
    return f"{part.id}: {' '.join(lines[:2])}"[:NOTE_WIDTH] if lines else None


def graded_row(staged: Staged, config: GradingConfig, result: RunResult) -> Graded:
    notes = list(staged.notes)
    if staged.declared_flavor and staged.declared_flavor != config.flavor:
        notes.append(f"its grader.toml says {staged.declared_flavor}; graded as {config.flavor}")
    missing_parts = {p.id for p in result.parts if get_part(p.id).file in staged.missing}
    notes += [line for p in result.parts if p.id not in missing_parts
              and (line := _first_line_of_trouble(p))]
    return Graded(staged.source, "graded", result.parts, config.max_score, notes, result)


def broken_row(path: str, config: GradingConfig, problem: str, status: RowStatus = "broken",
               finished: Sequence[PartResult] = ()) -> Graded:
    """A row for a submission that could not be staged, or whose grading the grader itself
    abandoned (then the parts that did finish keep their points)."""
    return Graded(path, status, unrun_parts(config, problem, finished), config.max_score,
                  [problem])


class BatchListener:
    """What a batch reports while it runs; the defaults ignore everything."""

    def started(self, paths: Sequence[str]) -> None:
        """The submissions, in row order, before any is graded."""

    def check_done(self, index: int, part_id: str, check: CheckResult) -> None:
        """One check of submission `index` has a result."""

    def part_done(self, index: int, part: PartResult) -> None:
        """Every check of one part of submission `index` has a result."""

    def finished(self, index: int, row: Graded) -> None:
        """Submission `index` has its final row."""


class Fanout(BatchListener):
    """Several listeners at once (a progress bar and a Gradescope file)."""

    def __init__(self, *listeners: BatchListener) -> None:
        self.listeners = listeners

    def started(self, paths: Sequence[str]) -> None:
        for listener in self.listeners:
            listener.started(paths)

    def check_done(self, index: int, part_id: str, check: CheckResult) -> None:
        for listener in self.listeners:
            listener.check_done(index, part_id, check)

    def part_done(self, index: int, part: PartResult) -> None:
        for listener in self.listeners:
            listener.part_done(index, part)

    def finished(self, index: int, row: Graded) -> None:
        for listener in self.listeners:
            listener.finished(index, row)


def grade_submissions(sources: Sequence[Path], config: GradingConfig, jobs: int = 2,
                      listener: BatchListener | None = None,
                      expand_folders: bool = True) -> list[Graded]:
    """Grade every submission (a folder of submissions counts as its entries when
    `expand_folders`), `jobs` at a time; rows come back in the order given."""
    listener = listener or BatchListener()
    paths = [p for s in sources for p in (expand(s) if expand_folders else [s])]
    listener.started([str(p) for p in paths])
    rows: dict[int, Graded] = {}
    with tempfile.TemporaryDirectory(prefix="grader-batch-") as tmp:
        staged = [stage(path, Path(tmp) / str(i)) for i, path in enumerate(paths)]
        requests: dict[str, int] = {}
        finished: dict[int, list[PartResult]] = {}
        for index, item in enumerate(staged):
            if item.root is None:
                rows[index] = broken_row(item.source, config, item.problem or "cannot grade")
                listener.finished(index, rows[index])
            else:
                requests[f"submission-{index}"] = index
        if requests:
            with WorkerPool(max(1, min(jobs, len(requests)))) as pool:
                batch = [config.request(rid, staged[i].root)  # type: ignore[arg-type]
                         for rid, i in requests.items()]
                for event in pool.grade(batch):
                    index = requests[event.request_id]
                    if isinstance(event, CheckDone):
                        listener.check_done(index, event.part_id, event.check)
                    elif isinstance(event, PartDone):
                        finished.setdefault(index, []).append(event.part)
                        listener.part_done(index, event.part)
                    elif isinstance(event, RequestDone):
                        rows[index] = (graded_row(staged[index], config, event.result)
                                       if event.result is not None else
                                       broken_row(staged[index].source, config,
                                                  event.error or "grader error", "error",
                                                  finished.get(index, ())))
                        listener.finished(index, rows[index])
    return [rows[i] for i in range(len(paths))]
