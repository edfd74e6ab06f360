"""Plain result records shared by the worker, the CLI and the renderers.

They cross a process boundary as JSON, so they hold only str, float, bool and None, and know how
to turn themselves into, and back from, the documented `--json` shape. What the worker sends is
taken as valid, bounded text (`from_wire`, grader/engine/safe_text.py): the judge's messages can
quote what a submission's code returned, and what a frame brought has been joined to other text.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, TypedDict

from grader.engine.safe_text import (
    CHECK_MESSAGE_LIMIT,
    CHECK_OUTPUT_LIMIT,
    NAME_LIMIT,
    PART_OUTPUT_LIMIT,
    clean,
    received,
)

Status = Literal["passed", "failed", "error", "timeout", "skipped", "undecided"]
STATUSES: tuple[Status, ...] = ("passed", "failed", "error", "timeout", "skipped", "undecided")
"""`undecided`: what the machine could not judge: too busy (a measurement whose rounds disagreed
to the end, or a check whose child got too little CPU to finish before the clock's backstop),
or short of memory (its process ended by the kernel's out-of-memory killer for memory that was
not the code's to use up: SHORT_OF_MEMORY); neither a pass nor a failure: it keeps its points
and earns none in this run, and every output says so, so that a re-run on a quieter machine,
or one with more memory free, decides it."""
SCHEMA_VERSION = 1
"""The version of the JSON documents grader writes (`check --json`, `grade --json`, `mock end
--json`), in each one's `schema_version`: raised when a field changes meaning or goes away
(a field added keeps it). Readers take every version up to theirs; docs/schemas/ holds each
document's JSON Schema, generated from the types below and in batch.py and mock.py."""
PRINTED_MARK = "--- your code printed ---"
TOO_BUSY = "the machine was too busy to judge {what}: re-run when it is quieter"
"""Said wherever a result holds undecided checks (the scorecard, a row's notes, Gradescope)."""
FILES_FULL = ("the machine's table of open files was full (another program's, or another "
              "submission's, files) while {file} was imported, so this was not judged: re-run")
"""What a check says whose child could not import the part for want of a file the machine
had none left to give (ENFILE): no fault of the code's, which had not run yet or was refused
by the machine, not by its own limit."""
SHORT_OF_MEMORY = ("the machine ran out of memory while this ran (its container's or its own, "
                   "not the memory the code under test may hold), so it was not judged: re-run "
                   "with more memory free")
"""What a check says whose process the kernel's out-of-memory killer ended when the memory that
ran out was not the code's to use up (see runner.children.Ended.machine)."""
NOT_SET_UP = ("the process for the code under test ended or stalled before any of that code "
              "ran ({why}), so this was not judged: re-run")
"""What a check says whose process failed in its own setup, before the candidate's first line:
the machine refused it something (a thread, a process, memory) or the grader failed (see
runner.children.Setup)."""
SHORT_OF_MEMORY_NOTE = "the machine ran out of memory judging {what}: re-run with more memory free"
"""TOO_BUSY's counterpart for the checks undecided for want of memory (SHORT_OF_MEMORY)."""


POINT_UNITS = 8
"""Points are kept and shown in eighths of a point, the one rule of every output (scorecard,
JSON, CSV, GitHub Classroom, Gradescope, the cohort report): eighths are GitHub Classroom's
granularity, and exact in binary floating point, so every sum of them is exact too. A part's
checks are apportioned by largest remainder (scale_to_weight), so that the checks shown add up
to the part shown, and the parts to the total."""


def apportion(values: Sequence[float], total: float) -> list[float]:
    """`values` in eighths that add up to `total` in eighths: each gets its floor, and the
    eighths left over go to the largest remainders (the earliest first on a tie)."""
    scaled = [v * POINT_UNITS for v in values]
    floors = [math.floor(c + 1e-6) for c in scaled]
    left = round(total * POINT_UNITS) - sum(floors)
    by_remainder = sorted(range(len(scaled)), key=lambda i: floors[i] - scaled[i])
    for i in by_remainder[:max(0, left)]:
        floors[i] += 1
    return [f / POINT_UNITS for f in floors]


def in_eighths(points: float) -> bool:
    """Whether a number of points is a whole number of eighths, as every weight must be."""
    return math.isclose(points * POINT_UNITS, round(points * POINT_UNITS), abs_tol=1e-9)


def points_text(points: float) -> str:
    """Points as every text output shows them: exactly (they are eighths: 12.875, 0.5), with
    at least one decimal (14.0)."""
    text = f"{points:.3f}".rstrip("0")
    return text + "0" if text.endswith(".") else text


def points_of(score: float, max_score: float) -> str:
    """"12.875/35.0": a score out of its maximum, in every text output."""
    return f"{points_text(score)}/{points_text(max_score)}"


def undecided_note(checks: list[CheckResult]) -> str:
    """One line naming a run's undecided checks and the points they hold back, or "": those
    the machine was too busy for, then those it had too little memory for."""
    held = [c for c in checks if c.status == "undecided"]
    short = [c for c in held if SHORT_OF_MEMORY in c.message]
    busy = [c for c in held if c not in short]
    return "; ".join(words.format(what=f"{', '.join(c.id for c in group)} "
                                       f"({points_text(sum(c.max_score for c in group))} points "
                                       "held back, not lost)")
                     for words, group in ((TOO_BUSY, busy), (SHORT_OF_MEMORY_NOTE, short))
                     if group)


class CheckDoc(TypedDict):
    """A check in the documented `--json` shape (check's, grade's, the cohort report's input)."""

    id: str
    title: str
    status: Status
    score: float
    max_score: float
    message: str
    hint: str | None
    duration_s: float


class PartDoc(TypedDict):
    """A part in the documented `--json` shape: its checks, scored."""

    id: str
    title: str
    score: float
    max_score: float
    checks: list[CheckDoc]


class ClockDoc(TypedDict):
    """A mock round's clock at the time of a check."""

    elapsed_s: float
    remaining_s: float
    overtime: bool


class _RunDoc(TypedDict):
    schema_version: int
    round: str
    flavor: str
    seed: int
    score: float
    max_score: float
    parts: list[PartDoc]


class RunDoc(_RunDoc, total=False):
    """The `grader check --json` document. `mock`: the round's clock, during a mock round
    only."""

    mock: ClockDoc


def not_applicable(status: str, max_score: float) -> bool:
    """Skipped by its own judge, so worth nothing here (GPU timing on a machine without CUDA):
    unlike a check not run after a hang, which keeps its points and scores 0."""
    return status == "skipped" and max_score == 0


@dataclass
class CheckResult:
    """One hidden check's outcome. `output` is what the candidate's code printed during it;
    `not_implemented`: the code under test is still the stub (it raised NotImplementedError);
    `after`: the checks whose failure would explain this one's; `rank`: how likely a failure
    here is the mistake to fix first (the scorecard's order, see grader.engine.triage)."""

    id: str
    title: str
    status: Status
    score: float
    max_score: float
    message: str = ""
    hint: str | None = None
    duration_s: float = 0.0
    output: str = ""
    not_implemented: bool = False
    after: list[str] = field(default_factory=list)
    rank: int = 1

    @property
    def not_applicable(self) -> bool:
        return not_applicable(self.status, self.max_score)

    def to_dict(self) -> CheckDoc:
        """The documented JSON shape; printed output is folded into the message there."""
        message = self.message
        if self.output:
            message = f"{message}\n{PRINTED_MARK}\n{self.output}".lstrip("\n")
        return {
            "id": self.id,
            "title": self.title,
            "status": self.status,
            "score": round(self.score, 4),
            "max_score": round(self.max_score, 4),
            "message": message,
            "hint": self.hint,
            "duration_s": round(self.duration_s, 4),
        }

    @classmethod
    def from_wire(cls, data: dict[str, Any]) -> CheckResult:
        """Rebuild from the worker's event (which, unlike to_dict, keeps output apart), its
        text made valid and cut to the caps of a check (grader/engine/safe_text.py)."""
        check = cls(**data)
        check.title = received(check.title, NAME_LIMIT)
        check.message = received(check.message, CHECK_MESSAGE_LIMIT)
        check.hint = None if check.hint is None else received(check.hint, CHECK_MESSAGE_LIMIT)
        check.output = received(check.output, CHECK_OUTPUT_LIMIT)
        return check


@dataclass
class PartResult:
    """All checks of one part, in the order they ran."""

    id: str
    title: str
    checks: list[CheckResult] = field(default_factory=list)

    @property
    def score(self) -> float:
        return sum(c.score for c in self.checks)

    @property
    def max_score(self) -> float:
        return sum(c.max_score for c in self.checks)

    @property
    def passed(self) -> bool:
        """Every check that applies here passed: the one meaning of "passed" everywhere (the
        exit status, the summary line, `grader list`, a mock round's first pass). A check that
        cannot apply on this machine is no obstacle; any other skip is not a pass."""
        return bool(self.checks) and all(c.status == "passed" or c.not_applicable
                                         for c in self.checks)

    def to_dict(self) -> PartDoc:
        return {
            "id": self.id,
            "title": self.title,
            "score": round(self.score, 4),
            "max_score": round(self.max_score, 4),
            "checks": [c.to_dict() for c in self.checks],
        }


@dataclass
class RunResult:
    """One `grader check` run: a round, a flavor, a seed and the parts that were selected."""

    round: str
    flavor: str
    seed: int
    parts: list[PartResult] = field(default_factory=list)

    @property
    def score(self) -> float:
        return sum(p.score for p in self.parts)

    @property
    def max_score(self) -> float:
        return sum(p.max_score for p in self.parts)

    @property
    def all_passed(self) -> bool:
        return all(p.passed for p in self.parts)

    def to_dict(self) -> RunDoc:
        return {
            "schema_version": SCHEMA_VERSION,
            "round": self.round,
            "flavor": self.flavor,
            "seed": self.seed,
            "score": round(self.score, 4),
            "max_score": round(self.max_score, 4),
            "parts": [p.to_dict() for p in self.parts],
        }


def bound_output(parts: list[PartResult], limit: int = PART_OUTPUT_LIMIT) -> None:
    """Keep at most `limit` characters of what the code printed over all the checks of each
    part, the earliest checks' first: a check past the budget keeps a line saying how much it
    printed. (Each check's output is capped already, a part's many checks are not.)"""
    for part in parts:
        left = limit
        for check in part.checks:
            if len(check.output) <= left:
                left -= len(check.output)
                continue
            kept = check.output[:left]
            check.output = (f"{kept}\n... ({len(check.output) - left} more characters not "
                            f"shown; a part keeps {limit} of what its code printed)").lstrip("\n")
            left = 0


def weigh_properties(results: list[CheckResult]) -> None:
    """A property of a function that holds (rank 1: inputs left unchanged, a fresh result,
    the dtype kept, a cost) is worth its points in the share that the part's checks of values
    (rank 2) earned of theirs: a function that computes nothing changes nothing, allocates
    nothing and costs nothing, so its properties hold vacuously and prove nothing. The rest of
    their points goes to the checks of values that were not earned, in proportion to what each
    missed, so that a pass still scores its whole maximum and the part's total stays its
    weight. A part without checks of values keeps every point. The message of a property so
    weighed says so."""
    values = [r for r in results if r.rank == 2 and r.max_score > 0]
    total = sum(r.max_score for r in values)
    share = sum(r.score for r in values) / total if total else 1.0
    missed = [(r, r.max_score - r.score) for r in values if r.score < r.max_score]
    missing = sum(m for _, m in missed)
    if share >= 1 or not missing:
        return
    moved = 0.0
    for r in results:
        if r.rank != 1 or r.status != "passed" or r.max_score <= 0:
            continue
        moved += r.max_score * (1 - share)
        r.score, r.max_score = r.score * share, r.max_score * share
        r.message = (f"{r.message}; " if r.message else "") + (
            f"worth {share:.0%} of its points, the share the part's checks of values earned")
    for r, m in missed:
        r.max_score += moved * m / missing


def scale_to_weight(results: list[CheckResult], weight: float) -> None:
    """Share a part's weight among its checks in proportion to their points: the one scoring
    rule, for graded parts and for the stand-ins of parts that never ran alike.

    A check that cannot apply on this machine (GPU timing without a GPU) enters with max_score
    0, so its share goes to the checks that did run and a perfect part still scores its full
    weight; a check skipped because the code hid what it measures, or not run after a hang or
    a crash, keeps its share and earns nothing.

    The shares are then put in eighths (POINT_UNITS): the maxima apportioned to add up to the
    weight, a passed check earning its whole maximum, and the others the eighths that the
    points they earned round to, apportioned by largest remainder, never a failed check's whole
    maximum: what every output shows is what is kept, and it adds up.
    """
    total = sum(r.max_score for r in results)
    factor = weight / total if total else 0.0
    maxima = apportion([r.max_score * factor for r in results], weight if total else 0.0)
    tops = [round(m * POINT_UNITS) for m in maxima]
    earned = [r.score * factor * POINT_UNITS for r in results]
    units = [top if r.status == "passed" else min(math.floor(e + 1e-6), max(0, top - 1))
             for r, top, e in zip(results, tops, earned, strict=True)]
    others = [i for i, r in enumerate(results) if r.status != "passed"]
    left = round(sum(earned[i] for i in others)) - sum(units[i] for i in others)
    room = sorted((i for i in others if units[i] + 1 < tops[i]),
                  key=lambda i: units[i] - earned[i])
    for i in room[:max(0, left)]:
        units[i] += 1
    for r, top, unit in zip(results, tops, units, strict=True):
        r.score, r.max_score = unit / POINT_UNITS, top / POINT_UNITS


HONESTY_NOTE = "Hidden checks against the references: strong evidence, not proof. A skip is " \
    "not a pass."
"""What every report of hidden checks says of itself, wherever it is shown."""


def check_label(part: PartResult, check: CheckResult) -> str:
    """A check's name where it is one test among many (Gradescope, GitHub Classroom)."""
    return clean(f"{part.id} {part.title}: {check.title} ({check.id})")


def check_text(check: CheckResult) -> str:
    """What a candidate reads under one test outside the terminal: the status, the message, a
    hint, their prints, cleaned of control sequences (the message and the prints are their
    code's)."""
    lines = [f"[{check.status}] {check.message}".rstrip()]
    if check.hint:
        lines.append(f"hint: {check.hint}")
    if check.output:
        lines.append(f"your code printed:\n{check.output.rstrip()}")
    return clean("\n".join(lines))
