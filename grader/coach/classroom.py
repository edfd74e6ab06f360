"""GitHub Classroom's autograding result: the document its command-grader action reports.

The classroom reporter (classroom-resources/autograding-grading-reporter) reads each grading
step's `result` output, base64-decodes it to `{"version": 1, "status", "max_score", "tests":
[...]}` and adds up the tests' `score` against the top-level `max_score`: that sum is the grade
Classroom records. So each hidden check is one test carrying its points, which are eighths of a
point as everywhere (results.POINT_UNITS): every part sums exactly, and since eighths are exact
in binary floating point, so does the reporter's running total (a perfect submission reads
100/100, not 99.99999999999999/100), and each test shows what the scorecard shows.

`status` is "pass", "fail" or "error" (the code crashed, could not be imported, or hung), at the
top and per test, as the action reports them; a skip is never a pass. A check that cannot apply
on the grading machine (GPU timing on a CPU runner) is worth nothing there and is no test, as on
Gradescope. `duration` is in milliseconds and `line_no` 0 (unknown), like the action's own.
"""

from __future__ import annotations

import base64
import json
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


def test_status(check: CheckResult) -> ClassroomStatus:
    if check.status == "passed":
        return "pass"
    return "error" if check.status in ("error", "timeout", "undecided") else "fail"


def part_tests(result: RunResult, part: PartResult) -> list[ClassroomTest]:
    """The tests of one part: its checks that apply here, with their points."""
    filename = f"exercises/{get_round(result.round).part(part.id).file}"
    return [{
        "name": check_label(part, check),
        "status": test_status(check),
        "score": check.score,
        "message": check_text(check),
        "test_code": f"grader check {part.id} --seed {result.seed}",
        "filename": filename,
        "line_no": 0,
        "duration": round(check.duration_s * 1000),
    } for check in part.checks if not check.not_applicable]


def document(result: RunResult) -> ClassroomDocument:
    """The whole run as one classroom result: pass only when every graded check passed."""
    tests = [t for part in result.parts for t in part_tests(result, part)]
    statuses = {t["status"] for t in tests}
    status: ClassroomStatus = ("pass" if result.all_passed else
                               "error" if "error" in statuses else "fail")
    return {"version": 1, "status": status,
            "max_score": result.max_score, "tests": tests}


def encode(doc: ClassroomDocument) -> str:
    """The `result` output the reporter reads: the compact JSON, base64-encoded, every string
    in it valid (safe_text.valid_tree), whatever a check holds."""
    compact = json.dumps(valid_tree(doc), separators=(",", ":"))
    return base64.b64encode(compact.encode()).decode()
