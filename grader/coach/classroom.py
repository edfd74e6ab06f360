"""GitHub Classroom's autograding result: the document its command-grader action reports.

The classroom reporter (classroom-resources/autograding-grading-reporter) reads each grading
step's `result` output, base64-decodes it to `{"version": 1, "status", "max_score", "tests":
[...]}` and adds up the tests' `score` against the top-level `max_score`: that sum is the grade
Classroom records. So each hidden check is one test carrying its points, and the points are
rounded to eighths of a point: every part still sums exactly, and since eighths are exact in
binary floating point, so does the reporter's running total (a perfect submission reads
100/100, not 99.99999999999999/100).

`status` is "pass", "fail" or "error" (the code crashed, could not be imported, or hung), at the
top and per test, as the action reports them; a skip is never a pass. A check that cannot apply
on the grading machine (GPU timing on a CPU runner) is worth nothing there and is no test, as on
Gradescope. `duration` is in milliseconds and `line_no` 0 (unknown), like the action's own.
"""

from __future__ import annotations

import base64
import json
import math
from collections.abc import Sequence
from typing import Literal, TypedDict

from grader.engine.results import CheckResult, PartResult, RunResult, check_label, check_text
from grader.engine.rounds import get_round
from grader.engine.safe_text import valid_tree

ClassroomStatus = Literal["pass", "fail", "error"]


class ClassroomTest(TypedDict):
    name: str
    status: ClassroomStatus
    score: float
    message: str
    test_code: str
    filename: str
    line_no: int
    duration: int


class ClassroomDocument(TypedDict):
    version: int
    status: ClassroomStatus
    max_score: float
    tests: list[ClassroomTest]


UNITS = 8  # per point: scores are multiples of 1/8, which floats add up exactly


def to_units(values: Sequence[float], total: float) -> list[float]:
    """`values` rounded to eighths so that they add up to `total` rounded to eighths: each
    gets its floor, and the eighths left over go to the largest remainders."""
    scaled = [v * UNITS for v in values]
    floors = [math.floor(c + 1e-6) for c in scaled]
    left = round(total * UNITS) - sum(floors)
    by_remainder = sorted(range(len(scaled)), key=lambda i: floors[i] - scaled[i])
    for i in by_remainder[:max(0, left)]:
        floors[i] += 1
    return [f / UNITS for f in floors]


def _in_units(value: float) -> float:
    return math.floor(value * UNITS + 1e-6) / UNITS


def test_status(check: CheckResult) -> ClassroomStatus:
    if check.status == "passed":
        return "pass"
    return "error" if check.status in ("error", "timeout", "undecided") else "fail"


def part_tests(result: RunResult, part: PartResult) -> list[ClassroomTest]:
    """The tests of one part: its checks that apply here, their points in eighths."""
    checks = [c for c in part.checks if not c.not_applicable]
    maxima = to_units([c.max_score for c in checks], part.max_score)
    filename = f"exercises/{get_round(result.round).part(part.id).file}"
    return [{
        "name": check_label(part, check),
        "status": test_status(check),
        "score": top if check.status == "passed" else min(top, _in_units(check.score)),
        "message": check_text(check),
        "test_code": f"grader check {part.id} --seed {result.seed}",
        "filename": filename,
        "line_no": 0,
        "duration": round(check.duration_s * 1000),
    } for check, top in zip(checks, maxima, strict=True)]


def document(result: RunResult) -> ClassroomDocument:
    """The whole run as one classroom result: pass only when every graded check passed."""
    tests = [t for part in result.parts for t in part_tests(result, part)]
    statuses = {t["status"] for t in tests}
    status: ClassroomStatus = ("pass" if result.all_passed else
                               "error" if "error" in statuses else "fail")
    return {"version": 1, "status": status,
            "max_score": round(result.max_score * UNITS) / UNITS, "tests": tests}


def encode(doc: ClassroomDocument) -> str:
    """The `result` output the reporter reads: the compact JSON, base64-encoded, every string
    in it valid (safe_text.valid_tree), whatever a check holds."""
    compact = json.dumps(valid_tree(doc), separators=(",", ":"))
    return base64.b64encode(compact.encode()).decode()
