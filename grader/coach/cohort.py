"""Where a cohort stands: the figures of the cohort report, computed from `grade --json`.

`grader grade --report` and `grader report RESULTS.json` both start from the same document
(batch.BatchDoc), so a report made later from a saved JSON is the report the batch would have
written. Nothing here renders; cohort_report.py turns a Cohort into HTML.

A "named mistake" is the hint of a failed check: when the grader recognises a known slip, its
hint is the diagnosis ("matmul is not commutative: ..."), so the distinct hints, ranked by how
many submissions got them, are the class's mistakes. Pass rates count only the submissions that
were graded (a zip that could not be read says nothing about a check), while the distributions
count every row, as the gradebook does.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

from grader import DISTRIBUTION
from grader.coach.batch import ROW_STATUSES, BatchDoc, RowStatus, SubmissionDoc
from grader.engine import results
from grader.engine.documents import Unreadable, json_document, read_document
from grader.engine.results import PRINTED_MARK, SCHEMA_VERSION, STATUSES, CheckDoc, Status
from grader.engine.shapes import brief, shape_problem

GRADED: tuple[RowStatus, ...] = ("graded",)
"""The rows that were graded (a mismatch is a submission for another round or flavor, not
graded)."""
MESSAGE_WIDTH = 200


class CohortError(Exception):
    """The results file cannot be read as a `grade --json` document; the message says why."""


def read_results(path: Path) -> BatchDoc:
    """A saved `grade --json` document, checked against its documented shape."""
    try:
        data = read_document(path, json_document)
    except Unreadable as exc:
        raise CohortError(f"{path}: {exc}") from exc
    if isinstance(data, dict) and "parts" in data and "submissions" not in data:
        raise CohortError(f"{path}: this is one workspace's `grader check --json`; the cohort "
                          "report reads the `grader grade --json` of a batch")
    if isinstance(data, dict):
        data = {"schema_version": _version(path, data), **data}
    problem = shape_problem(data, BatchDoc)
    if problem:
        raise CohortError(f"{path}: not a `grader grade --json` document: {problem}")
    return cast(BatchDoc, data)


def _version(path: Path, data: dict[str, Any]) -> int:
    """The document's schema version: 0 for one written before documents carried it (the same
    shape as version 1); a version newer than this grader's is an error that says so."""
    version = data.get("schema_version", 0)
    if not isinstance(version, int) or isinstance(version, bool) or version < 0:
        raise CohortError(f"{path}: schema_version should be a whole number, not "
                          f"{brief(version)}")
    if version > SCHEMA_VERSION:
        raise CohortError(f"{path}: written by a newer grader (schema version {version}); this "
                          f"one reads versions up to {SCHEMA_VERSION}: upgrade grader "
                          f"(pip install -U {DISTRIBUTION})")
    return version


@dataclass(frozen=True)
class Distribution:
    """The scores of one column (a part, or the total) over the submissions that have it."""

    id: str
    title: str
    max_score: float
    scores: list[float]

    @property
    def mean(self) -> float:
        return statistics.fmean(self.scores) if self.scores else 0.0

    @property
    def median(self) -> float:
        return statistics.median(self.scores) if self.scores else 0.0

    @property
    def full_marks(self) -> int:
        return sum(1 for s in self.scores if s >= self.max_score - 1e-9)


@dataclass
class CheckRate:
    """How one check went over the graded submissions it applied to, and on how many it could
    not apply on the grading machine (GPU timing without CUDA): not a check they failed."""

    id: str
    title: str
    statuses: dict[Status, int] = field(default_factory=lambda: dict.fromkeys(STATUSES, 0))
    not_applicable: int = 0

    @property
    def applied(self) -> int:
        return sum(self.statuses.values())

    @property
    def passed(self) -> int:
        return self.statuses["passed"]

    @property
    def rate(self) -> float:
        return self.passed / self.applied if self.applied else 0.0


@dataclass
class Mistake:
    """A hint that failed checks carried: the checks, and the submissions (row indexes)."""

    hint: str
    checks: list[str] = field(default_factory=list)
    submissions: list[int] = field(default_factory=list)


@dataclass(frozen=True)
class Trouble:
    """Checks of one part of one submission that timed out or crashed, with the first one's
    message (the others of a crashed import say the same)."""

    submission: int
    part_id: str
    status: Status
    checks: list[str]
    message: str


@dataclass(frozen=True)
class Cohort:
    """Everything the cohort report shows, in the order it shows it."""

    round: str
    seed: int
    submissions: list[SubmissionDoc]
    total: Distribution
    parts: list[Distribution]
    checks: list[CheckRate]
    mistakes: list[Mistake]
    timeouts: list[Trouble]
    crashes: list[Trouble]

    @property
    def row_statuses(self) -> dict[RowStatus, int]:
        counts = dict.fromkeys(ROW_STATUSES, 0)
        for sub in self.submissions:
            counts[sub["status"]] += 1
        return counts

    @property
    def graded(self) -> int:
        return sum(1 for sub in self.submissions if sub["status"] in GRADED)

    @property
    def ungraded(self) -> list[int]:
        """The rows that could not be graded at all (unreadable, or the grader failed)."""
        return [i for i, sub in enumerate(self.submissions) if sub["status"] not in GRADED]

    @property
    def scanned(self) -> bool:
        """Whether a review scan ran at all (its results carry `flags`, even empty ones)."""
        return any("flags" in sub for sub in self.submissions)

    @property
    def flagged(self) -> list[int]:
        return [i for i, sub in enumerate(self.submissions) if sub.get("flags")]


def gist(message: str) -> str:
    """A check's message in one line: its first two lines, without what the code printed
    (an import error says what failed on the first and why on the second)."""
    said = message.split(PRINTED_MARK)[0]
    line = " ".join([ln.strip() for ln in said.splitlines() if ln.strip()][:2])
    return line if len(line) <= MESSAGE_WIDTH else line[:MESSAGE_WIDTH - 3] + "..."


def distributions(submissions: Sequence[SubmissionDoc]) -> tuple[Distribution,
                                                                 list[Distribution]]:
    """The total's distribution, and each part's, in the order the parts first appear."""
    total = Distribution("total", "Total", max((s["max_score"] for s in submissions),
                                               default=0.0),
                         [s["score"] for s in submissions])
    parts: dict[str, Distribution] = {}
    for sub in submissions:
        for part in sub["parts"]:
            column = parts.setdefault(part["id"], Distribution(part["id"], part["title"],
                                                               part["max_score"], []))
            column.scores.append(part["score"])
    return total, list(parts.values())


def not_applicable(check: CheckDoc) -> bool:
    """Worth nothing on the grading machine (GPU timing without CUDA): not a check it took."""
    return results.not_applicable(check["status"], check["max_score"])


def check_rates(submissions: Sequence[SubmissionDoc]) -> list[CheckRate]:
    rates: dict[str, CheckRate] = {}
    for sub in submissions:
        if sub["status"] not in GRADED:
            continue
        for part in sub["parts"]:
            for check in part["checks"]:
                rate = rates.setdefault(check["id"], CheckRate(check["id"], check["title"]))
                if not_applicable(check):
                    rate.not_applicable += 1
                else:
                    rate.statuses[check["status"]] += 1
    return list(rates.values())


def named_mistakes(submissions: Sequence[SubmissionDoc]) -> list[Mistake]:
    """The distinct hints of failed checks, most submissions first (ties: first seen first)."""
    found: dict[str, Mistake] = {}
    for index, sub in enumerate(submissions):
        for part in sub["parts"]:
            for check in part["checks"]:
                if check["status"] != "failed" or not check["hint"]:
                    continue
                mistake = found.setdefault(check["hint"], Mistake(check["hint"]))
                if check["id"] not in mistake.checks:
                    mistake.checks.append(check["id"])
                if index not in mistake.submissions:
                    mistake.submissions.append(index)
    return sorted(found.values(), key=lambda m: -len(m.submissions))


def troubles(submissions: Sequence[SubmissionDoc], status: Status) -> list[Trouble]:
    """The parts of graded submissions where checks ended with `status` (timeout, error)."""
    found = []
    for index, sub in enumerate(submissions):
        if sub["status"] not in GRADED:
            continue
        for part in sub["parts"]:
            hit = [c for c in part["checks"] if c["status"] == status]
            if hit:
                found.append(Trouble(index, part["id"], status, [c["id"] for c in hit],
                                     gist(hit[0]["message"])))
    return found


def cohort(doc: BatchDoc) -> Cohort:
    submissions = doc["submissions"]
    total, parts = distributions(submissions)
    return Cohort(round=doc["round"], seed=doc["seed"], submissions=submissions, total=total,
                  parts=parts, checks=check_rates(submissions),
                  mistakes=named_mistakes(submissions), timeouts=troubles(submissions,
                                                                           "timeout"),
                  crashes=troubles(submissions, "error"))
