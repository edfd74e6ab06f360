"""The mock-interview round: a timed session recorded in the workspace's `.grader/mock/` folder.

Everything here is plain data and arithmetic on timestamps, so the whole round is testable with
a fake clock: every function that needs the time takes `now` (seconds since the epoch) from its
caller, and the CLI reads it from `wall_clock()` (wall time, not a monotonic clock, because a
round must survive a reboot). Nothing here imports torch or rich.

Layout of `.grader/mock/`:

    session.json            the current (or most recent) round, rewritten atomically
    .lock                   serialises read-modify-write (watch mode and a manual check at once)
    <round id>/snapshots/   the exercise file of every attempt, stored once per content
    <round id>/report.md    the report, written when the round ends
    <round id>/report.json
    <round id>/session.json the ended round's whole record, kept when the next one starts

How a round measures time per part: the interview reveals the parts in order, so a part's clock
starts at the latest first pass of an earlier part (the round's start for the first part) and
stops at its own first full pass. A part is *reached* once the part before it has passed (or it
has passed itself); an unreached part has spent no time. A part is over budget when its time
exceeds its budget.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import math
import re
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, TypedDict

from grader.engine.results import SCHEMA_VERSION, ClockDoc, RunResult
from grader.engine.rounds import DEFAULT_ROUND, Part
from grader.engine.shapes import shape_problem
from grader.engine.state import (
    read_json,
    regular_file_bytes,
    write_bytes_atomic,
    write_json_atomic,
    write_text_atomic,
)
from grader.engine.workspace import Workspace, pristine_files

MOCK_DIR = "mock"
SESSION = "session.json"
CLOSE_FRACTION = 0.8  # a running part is "close" once it has used this share of its budget
MISSING = "missing"  # digest of an exercise file that does not exist


class MockError(Exception):
    """A round problem the user can fix (none running, damaged state); the CLI prints it."""


def wall_clock() -> float:
    """The clock the CLI uses; tests replace it (this module's attribute) with a fake."""
    return time.time()


@dataclass(frozen=True)
class Attempt:
    """One recorded check of one part: when, how it scored, and the code that was checked."""

    at_s: float
    part: str
    score: float
    max_score: float
    full: bool
    hints: int
    overtime: bool
    snapshot: str
    digest: str


@dataclass(frozen=True)
class HintTaken:
    at_s: float
    part: str
    level: int


@dataclass(frozen=True)
class SolutionViewed:
    """`grader solution PART` during a round; `forced` means before the part had passed."""

    at_s: float
    part: str
    forced: bool


@dataclass(frozen=True)
class FollowUpAnswer:
    """An interviewer's follow-up question and what the candidate said (empty when skipped).

    `evidence` keeps what the live demonstration showed (the real error, the line), so the
    report can quote it even when the question was skipped.
    """

    at_s: float
    part: str
    question: str
    answer: str
    skipped: bool
    evidence: dict[str, Any] = field(default_factory=dict)


@dataclass
class MockRound:
    """A mock round: its settings, frozen at the start, and everything recorded since."""

    id: str
    started_at: float
    minutes: float
    flavor: str
    parts: list[str]
    budgets_s: dict[str, float]
    weights: dict[str, float]
    attempts: list[Attempt] = field(default_factory=list)
    hints: list[HintTaken] = field(default_factory=list)
    solutions: list[SolutionViewed] = field(default_factory=list)
    followups: list[FollowUpAnswer] = field(default_factory=list)
    ended_at: float | None = None
    round_id: str = DEFAULT_ROUND

    @property
    def limit_s(self) -> float:
        return self.minutes * 60.0

    @property
    def running(self) -> bool:
        return self.ended_at is None

    def elapsed_s(self, now: float) -> float:
        """Seconds since the start; an ended round's clock stopped at its end."""
        end = self.ended_at if self.ended_at is not None else now
        return max(0.0, end - self.started_at)

    def hints_for(self, part: str) -> int:
        """Hints used on a part: the hint levels revealed, plus one if its solution was viewed
        before it passed (seeing the same hint or solution again reveals nothing new)."""
        return len({h.level for h in self.hints if h.part == part}) + any(
            s.part == part and s.forced for s in self.solutions)

    def attempts_for(self, part: str) -> list[Attempt]:
        return [a for a in self.attempts if a.part == part]

    def first_pass(self, part: str) -> Attempt | None:
        return next((a for a in self.attempts_for(part) if a.full), None)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> MockRound:
        records = {"attempts": Attempt, "hints": HintTaken, "solutions": SolutionViewed,
                   "followups": FollowUpAnswer}
        fields = dict(data)
        for key, kind in records.items():
            fields[key] = [kind(**item) for item in data.get(key, [])]
        return cls(**fields)


@dataclass(frozen=True)
class RoundClock:
    """The round's clock at one moment: what `grader check --json` reports as "mock"."""

    elapsed_s: float
    remaining_s: float
    overtime: bool
    limit_s: float

    def to_json(self) -> ClockDoc:
        return {"elapsed_s": round(self.elapsed_s, 3), "remaining_s": round(self.remaining_s, 3),
                "overtime": self.overtime}


def clock(round_: MockRound, now: float) -> RoundClock:
    elapsed = round_.elapsed_s(now)
    return RoundClock(elapsed, max(0.0, round_.limit_s - elapsed), elapsed > round_.limit_s,
                 round_.limit_s)


class MockPartDoc(TypedDict):
    """One part of the round: when it first passed (seconds into the round, null if never),
    its checks and hints, its budget and whether its time ran over."""

    id: str
    passed_at_s: float | None
    attempts: int
    hints: int
    budget_s: float
    over_budget: bool


class FollowupDoc(TypedDict):
    """A follow-up question asked during the round, with its model answer."""

    part: str
    question: str
    answer: str


class MockEndDoc(TypedDict):
    """The `grader mock end --json` document."""

    schema_version: int
    round: str
    elapsed_s: float
    score: float
    max_score: float
    parts: list[MockPartDoc]
    followups: list[FollowupDoc]


@dataclass(frozen=True)
class PartProgress:
    """Where one part of the round stands: the numbers of the report and of every banner."""

    id: str
    budget_s: float
    passed_at_s: float | None
    attempts: int
    attempts_to_pass: int | None
    hints: int
    spent_s: float
    reached: bool
    score: float
    max_score: float

    @property
    def over_budget(self) -> bool:
        return self.spent_s > self.budget_s

    @property
    def budget_state(self) -> str:
        """within / close / over, or "not reached" for a part whose clock has not started."""
        if not self.reached:
            return "not reached"
        if self.over_budget:
            return "over"
        if self.passed_at_s is None and self.spent_s >= CLOSE_FRACTION * self.budget_s:
            return "close"
        return "within"

    def to_json(self) -> MockPartDoc:
        """The documented per-part shape of `grader mock end --json`."""
        return {
            "id": self.id,
            "passed_at_s": None if self.passed_at_s is None else round(self.passed_at_s, 3),
            "attempts": self.attempts,
            "hints": self.hints,
            "budget_s": round(self.budget_s, 3),
            "over_budget": self.over_budget,
        }


def progress(round_: MockRound, now: float) -> list[PartProgress]:
    """Every part of the round at `now`, in the round's order (see the module docstring)."""
    elapsed = round_.elapsed_s(now)
    passes = {p: a.at_s for p in round_.parts if (a := round_.first_pass(p)) is not None}
    rows = []
    for index, part in enumerate(round_.parts):
        passed_at = passes.get(part)
        end = passed_at if passed_at is not None else elapsed
        earlier = [passes[p] for p in round_.parts[:index] if p in passes and passes[p] <= end]
        reached = index == 0 or round_.parts[index - 1] in passes or passed_at is not None
        attempts = round_.attempts_for(part)
        to_pass = next((i + 1 for i, a in enumerate(attempts) if a.full), None)
        rows.append(PartProgress(
            id=part, budget_s=round_.budgets_s[part], passed_at_s=passed_at,
            attempts=len(attempts), attempts_to_pass=to_pass, hints=round_.hints_for(part),
            spent_s=max(0.0, end - max(earlier, default=0.0)) if reached else 0.0,
            reached=reached, score=attempts[-1].score if attempts else 0.0,
            max_score=round_.weights[part],
        ))
    return rows


@dataclass(frozen=True)
class Report:
    """The end-of-round report: the documented JSON plus what the markdown adds."""

    round: MockRound
    elapsed_s: float
    parts: list[PartProgress]
    score: float
    max_score: float
    score_at_limit: float

    @property
    def overtime(self) -> bool:
        return self.elapsed_s > self.round.limit_s

    def to_json(self) -> MockEndDoc:
        """Exactly the fields documented for `grader mock end --json`."""
        return {
            "schema_version": SCHEMA_VERSION,
            "round": self.round.round_id,
            "elapsed_s": round(self.elapsed_s, 3),
            "score": round(self.score, 4),
            "max_score": round(self.max_score, 4),
            "parts": [p.to_json() for p in self.parts],
            "followups": [{"part": f.part, "question": f.question, "answer": f.answer}
                          for f in self.round.followups],
        }


def build_report(round_: MockRound, now: float) -> Report:
    """The report of a round at `now` (for an ended round, `now` does not matter)."""
    at_limit: dict[str, float] = {}
    for attempt in round_.attempts:
        if attempt.at_s <= round_.limit_s:
            at_limit[attempt.part] = attempt.score
    parts = progress(round_, now)
    return Report(round_, round_.elapsed_s(now), parts, sum(p.score for p in parts),
                  sum(p.max_score for p in parts), sum(at_limit.values()))


# --- storage -----------------------------------------------------------------------------------


def mock_dir(workspace: Workspace) -> Path:
    return workspace.state_folder(MOCK_DIR)


def round_dir(workspace: Workspace, round_: MockRound) -> Path:
    return workspace.state_folder(MOCK_DIR, round_.id)


@contextlib.contextmanager
def _locked(workspace: Workspace) -> Iterator[None]:
    """Hold the round's lock: a watch loop and a manual check must not lose each other's writes."""
    folder = mock_dir(workspace)
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / ".lock", "w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def load_round(workspace: Workspace) -> MockRound | None:
    """The current or most recent round; None when there never was one.

    The file is only ever replaced whole, so a damaged one was edited by hand: say so rather
    than silently start from nothing.
    """
    path = mock_dir(workspace) / SESSION
    if not path.exists():
        return None
    data = read_json(path, None)
    problem = shape_problem(data, MockRound) or _settings_problem(data)
    if problem is not None:
        raise MockError(f"{path} is damaged ({problem}); move it aside to start a new round")
    return MockRound.from_dict(data)


ROUND_ID = re.compile(r"[0-9]{8}-[0-9]{6}(-[0-9]+)?")
"""A round's id as _round_id makes it: the name of its folder under .grader/mock/."""


def _settings_problem(data: dict[str, Any]) -> str | None:
    """What in a session that has the right shape cannot be a round's: an id that is no
    folder name of ours (it names where the round's files go: `../../x` would write outside
    the workspace), a clock that is no finite time, parts without their budget or weight."""
    if not ROUND_ID.fullmatch(data["id"]):
        return f"its id {data['id']!r} is not a round's"
    times = [data["started_at"], data["minutes"], *data["budgets_s"].values(),
             *data["weights"].values()] + ([] if data.get("ended_at") is None
                                           else [data["ended_at"]])
    if not all(math.isfinite(t) for t in times) or not data["minutes"] > 0:
        return "its times are not finite positive numbers"
    if any(part not in data["budgets_s"] or part not in data["weights"]
           for part in data["parts"]):
        return "a part has no budget or weight"
    return None


def _save(workspace: Workspace, round_: MockRound) -> None:
    write_json_atomic(mock_dir(workspace) / SESSION, round_.to_dict())


def current_round(workspace: Workspace) -> MockRound | None:
    """The running round, or None."""
    round_ = load_round(workspace)
    return round_ if round_ is not None and round_.running else None


@contextlib.contextmanager
def _updating(workspace: Workspace) -> Iterator[MockRound | None]:
    """The running round, saved again on leaving the block (under the lock). Without any
    round on record this touches nothing, so plain checks leave no trace of mock mode."""
    if not (mock_dir(workspace) / SESSION).exists():
        yield None
        return
    with _locked(workspace):
        round_ = current_round(workspace)
        yield round_
        if round_ is not None:
            _save(workspace, round_)


def _round_id(started: float, taken: Path) -> str:
    base = datetime.fromtimestamp(started).strftime("%Y%m%d-%H%M%S")
    name, counter = base, 1
    while (taken / name).exists():
        counter += 1
        name = f"{base}-{counter}"
    return name


def start_round(workspace: Workspace, now: float, minutes: float | None = None) -> MockRound:
    """Start a round; the caller has ended any running one first.

    Budgets come from the workspace settings for a round of the configured length and scale
    with `minutes`, so a 60-minute rehearsal keeps the same proportions.
    """
    settings = workspace.settings
    minutes = settings.minutes if minutes is None else minutes
    if not minutes > 0:
        raise MockError(f"a round needs a positive number of minutes, got {minutes:g}")
    scale = minutes / settings.minutes
    parts = list(settings.parts)
    with _locked(workspace):
        if current_round(workspace) is not None:
            raise MockError("a round is already running; end it first")
        round_ = MockRound(
            id=_round_id(now, mock_dir(workspace)), started_at=now, minutes=minutes,
            flavor=workspace.flavor, parts=[p.id for p in parts],
            budgets_s={p.id: settings.budget_minutes(p) * 60.0 * scale for p in parts},
            weights={p.id: settings.weight(p) for p in parts}, round_id=workspace.round.id,
        )
        round_dir(workspace, round_).mkdir(parents=True)
        _save(workspace, round_)
    return round_


Markdown = Callable[[Report], str]


@dataclass(frozen=True)
class Ended:
    """An ended round's report and where it was saved."""

    report: Report
    markdown_path: Path
    json_path: Path
    already: bool


def end_round(workspace: Workspace, now: float, markdown: Markdown) -> Ended:
    """End the running round (or, if the latest already ended, rewrite its report again) and
    save the report and the round's whole record beside its snapshots, where the next round
    cannot overwrite them. Ending twice is harmless, so a crash mid-way is repaired by running
    it again."""
    with _locked(workspace):
        round_ = load_round(workspace)
        if round_ is None:
            raise MockError("no mock round to end; start one with `grader mock start`")
        already = not round_.running
        if round_.running:
            round_.ended_at = now
            _save(workspace, round_)
    report = build_report(round_, now)
    folder = round_dir(workspace, round_)
    folder.mkdir(parents=True, exist_ok=True)
    md_path, json_path = folder / "report.md", folder / "report.json"
    write_text_atomic(md_path, markdown(report))
    write_json_atomic(json_path, report.to_json())
    write_json_atomic(folder / SESSION, round_.to_dict())
    return Ended(report, md_path, json_path, already)


# --- recording ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Recorded:
    """What one check added to the running round."""

    round: MockRound
    clock: RoundClock
    attempts: list[Attempt]
    first_passes: list[str]


def _digest(path: Path) -> str:
    data = regular_file_bytes(path)
    return MISSING if data is None else hashlib.sha256(data).hexdigest()


def _stub_digest(workspace: Workspace, part: Part, flavor: str) -> str:
    stub = pristine_files(workspace.round, flavor).get(part.file, "")
    return hashlib.sha256(stub.encode()).hexdigest()


def _snapshot(workspace: Workspace, round_: MockRound, source: Path, digest: str) -> str:
    """Copy the exercise file into the round's folder, once per distinct content."""
    if digest == MISSING:
        return ""
    target = workspace.state_folder(MOCK_DIR, round_.id, "snapshots") / \
        f"{digest[:12]}-{source.name}"
    if not target.exists():
        target.parent.mkdir(parents=True, exist_ok=True)
        write_bytes_atomic(target, regular_file_bytes(source) or b"")
    return str(target.relative_to(workspace.root))


def record_check(workspace: Workspace, result: RunResult, now: float) -> Recorded | None:
    """Record a check as attempts of the running round (None when no round runs).

    An attempt is a check of a part whose file or score changed since its last recorded
    attempt: `grader check` and watch mode re-run every part, and re-checking untouched code
    is not a new attempt. A file still equal to its pristine stub is no attempt either.
    """
    with _updating(workspace) as round_:
        if round_ is None:
            return None
        at = round_.elapsed_s(now)
        added, first = [], []
        for part in result.parts:
            if part.id not in round_.parts:
                continue
            source = workspace.part_file(workspace.round.part(part.id))
            digest = _digest(source)
            if digest == _stub_digest(workspace, workspace.round.part(part.id), round_.flavor):
                continue
            history = round_.attempts_for(part.id)
            last = history[-1] if history else None
            if last and (last.digest, last.score, last.full) == (digest, part.score,
                                                                 part.passed):
                continue
            if part.passed and round_.first_pass(part.id) is None:
                first.append(part.id)
            attempt = Attempt(
                at_s=at, part=part.id, score=part.score, max_score=part.max_score,
                full=part.passed, hints=round_.hints_for(part.id),
                overtime=at > round_.limit_s,
                snapshot=_snapshot(workspace, round_, source, digest), digest=digest,
            )
            round_.attempts.append(attempt)
            added.append(attempt)
        return Recorded(round_, clock(round_, now), added, first)


def take_hint(workspace: Workspace, part: str, available: int, now: float) -> int | None:
    """Reveal the next hint level of the round (levels restart with each round, so a
    rehearsal begins from the nudge); None when no round runs."""
    with _updating(workspace) as round_:
        if round_ is None:
            return None
        level = min(sum(h.part == part for h in round_.hints) + 1, available)
        round_.hints.append(HintTaken(round_.elapsed_s(now), part, level))
        return level


def record_solution(workspace: Workspace, part: str, forced: bool, now: float) -> bool:
    """Note a solution view in the running round; False when no round runs."""
    with _updating(workspace) as round_:
        if round_ is not None:
            round_.solutions.append(SolutionViewed(round_.elapsed_s(now), part, forced))
        return round_ is not None


def record_followup(workspace: Workspace, part: str, question: str, answer: str | None,
                    evidence: dict[str, Any], now: float) -> None:
    """Add a follow-up to the running round; `answer` None means it was skipped."""
    with _updating(workspace) as round_:
        if round_ is not None:
            round_.followups.append(FollowUpAnswer(
                round_.elapsed_s(now), part, question, answer or "", answer is None, evidence))
