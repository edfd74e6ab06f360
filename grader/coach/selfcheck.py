"""The developer self-check: every round's data, stubs and checks still agree with each other.

Whoever edits a stub, a reference, a check or a round's data runs `grader selfcheck` to prove,
in every round and flavor, that the round's files are complete and parse (check table, topics,
follow-ups, stubs and references for every part), that every pristine stub fails every check (a
check a stub passes checks nothing) and that every reference solution passes every check (a
check the reference fails is wrong, or flaky). Stubs and references are graded exactly as
candidates are, through the runner, from temporary workspaces, so a broken import path or a
missing stub shows up here too.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from grader.engine.limits import DEFAULT_TIMEOUT_S
from grader.engine.results import RunResult
from grader.engine.rounds import Round, RoundError
from grader.engine.workspace import EXERCISES_DIR, WorkspaceError, pristine_files
from grader.runner.pool import RequestDone, WorkerPool
from grader.runner.protocol import Request

Source = Literal["stubs", "references"]
SOURCES: tuple[Source, ...] = ("stubs", "references")


@dataclass(frozen=True)
class Violation:
    """One check (or one piece of a round's data) that disagrees with the rules."""

    round: str
    flavor: str
    source: Source | Literal["data"]
    check_id: str
    status: str
    message: str


@dataclass
class SelfcheckReport:
    """Every graded run, keyed by (round, flavor, source), and what broke the rules."""

    seed: int
    runs: dict[tuple[str, str, Source], RunResult] = field(default_factory=dict)
    violations: list[Violation] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.violations


def write_exercises(folder: Path, round_: Round, flavor: str, source: Source) -> Path:
    """A temporary workspace root whose exercises/ holds the stubs or the references."""
    exercises = folder / EXERCISES_DIR
    exercises.mkdir(parents=True)
    for name, text in pristine_files(round_, flavor).items():
        (exercises / name).write_text(text)
    if source == "references":
        for part in round_.parts_for(flavor):
            shutil.copyfile(round_.reference_file(part, flavor), exercises / part.file)
    return folder


def data_violations(round_: Round) -> list[Violation]:
    """What is missing or malformed in a round's data, before anything is graded."""
    from grader.checks.followups import followup_for
    from grader.checks.table import checks_for
    from grader.engine.prose import topics

    found = []

    def broken(flavor: str, what: str, message: str) -> None:
        found.append(Violation(round_.id, flavor, "data", what, "broken", message))

    try:
        known_topics = topics(round_)
    except RoundError as exc:
        broken("-", "topics", str(exc))
        known_topics = {}
    for flavor in round_.flavors:
        try:
            stubs = pristine_files(round_, flavor)
        except WorkspaceError as exc:
            broken(flavor, "stubs", str(exc))
            continue
        for part in round_.parts_for(flavor):
            if part.file not in stubs:
                broken(flavor, part.id, f"no stub {part.file}")
            if not round_.reference_file(part, flavor).is_file():
                broken(flavor, part.id, f"no reference {round_.reference_file(part, flavor)}")
            try:
                if not checks_for(round_, part.id, flavor):
                    broken(flavor, part.id, "this part has no checks in this flavor")
                followup = followup_for(round_, part.id, flavor)
            except RoundError as exc:
                broken(flavor, part.id, str(exc))
                continue
            for topic in followup.topics if followup else ():
                if topic not in known_topics:
                    broken(flavor, part.id, f"its follow-up names an unknown topic {topic!r}")
    return found


def violations(round_: Round, flavor: str, source: Source, result: RunResult) -> list[Violation]:
    """Stubs must earn nothing on every check; references must pass every check (a skip
    proves nothing, so it is a violation for a reference too, unless the check cannot apply on
    this machine at all, like GPU timing without CUDA)."""
    found = []
    for part in result.parts:
        for check in part.checks:
            bad = (check.status == "passed" or check.score > 0) if source == "stubs" \
                else not (check.status == "passed" or check.not_applicable)
            if bad:
                found.append(Violation(round_.id, flavor, source, check.id, check.status,
                                       check.message.splitlines()[0] if check.message else ""))
    return found


def run_selfcheck(rounds: Sequence[Round], flavors: Sequence[str] = (), seed: int = 0,
                  timeout_s: float = DEFAULT_TIMEOUT_S, jobs: int = 2,
                  on_run: Callable[[str, RunResult | None], None] | None = None
                  ) -> SelfcheckReport:
    """Check each round's data, then grade its stubs and references in each flavor (all of
    the round's, or those of `flavors` it has) and collect every violation."""
    report = SelfcheckReport(seed)
    with tempfile.TemporaryDirectory(prefix="grader-selfcheck-") as tmp:
        jobs_by_id: dict[str, tuple[Round, str, Source]] = {}
        requests = []
        for round_ in rounds:
            broken = data_violations(round_)
            report.violations += broken
            if broken:
                continue
            for flavor in [f for f in round_.flavors if not flavors or f in flavors]:
                parts = [p.id for p in round_.parts_for(flavor)]
                for source in SOURCES:
                    request_id = f"{round_.id}-{flavor}-{source}"
                    root = write_exercises(Path(tmp) / request_id, round_, flavor, source)
                    jobs_by_id[request_id] = (round_, flavor, source)
                    requests.append(Request(id=request_id, root=str(root), round=round_.id,
                                            flavor=flavor, parts=parts, seed=seed,
                                            timeout_s=timeout_s))
        if not requests:
            return report
        with WorkerPool(max(1, min(jobs, len(requests)))) as pool:
            for event in pool.grade(requests):
                if not isinstance(event, RequestDone):
                    continue
                round_, flavor, source = jobs_by_id[event.request_id]
                if event.result is None:
                    report.violations.append(Violation(round_.id, flavor, source, "(all)",
                                                       "error", event.error or "grader failed"))
                else:
                    report.runs[(round_.id, flavor, source)] = event.result
                    report.violations += violations(round_, flavor, source, event.result)
                if on_run:
                    on_run(f"the {round_.id} {flavor} {source}", event.result)
    return report
