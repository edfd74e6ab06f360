"""Gradescope's results.json, written early and often.

Gradescope shows whatever /autograder/results/results.json holds when run_autograder ends, and
nothing at all when the file is missing. So the file is written (atomically) before grading
starts, again as each part finishes, and a last time with the full result: a crash, a killed
process or Gradescope's own timeout still leaves a valid file whose `output` says how far
grading got.

Each hidden check is one Gradescope test. Gradescope knows only "passed" and "failed", so a
skipped, timed-out or errored check is "failed" with its real status in the output: a skip
never reads as a pass. A check that cannot apply on the grading machine (GPU timing without a
GPU: worth no points there) is no test at all; the top-level output says it was not graded.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from grader.coach.batch import BatchListener, GradedRow
from grader.coach.review import flags_line
from grader.engine.results import HONESTY_NOTE, PartResult, check_label, check_text, points_of
from grader.engine.safe_text import clean, valid_tree
from grader.engine.state import write_json_atomic


def tests(parts: Sequence[PartResult], visibility: str) -> list[dict[str, Any]]:
    """One Gradescope test per check, numbered part.check (1.1, 1.2, ..., 2.1, ...)."""
    entries = []
    for part in parts:
        part_number = part.id.removeprefix("part")
        for index, check in enumerate(part.checks, start=1):
            if check.not_applicable:
                continue
            entries.append({
                "name": check_label(part, check),
                "number": f"{part_number}.{index}",
                "score": round(check.score, 4),
                "max_score": round(check.max_score, 4),
                "status": "passed" if check.status == "passed" else "failed",
                "output": check_text(check),
                "output_format": "text",
                "tags": [part.id, check.status],
                "visibility": visibility,
            })
    return entries


def document(parts: Sequence[PartResult], output: str, execution_time: float, visibility: str,
             extra: dict[str, Any]) -> dict[str, Any]:
    """A complete results.json document."""
    entries = tests(parts, visibility)
    return {
        "score": round(sum(p.score for p in parts), 4),
        "execution_time": round(execution_time, 2),
        "output": output,
        "output_format": "text",
        "visibility": visibility,
        "stdout_visibility": "hidden",
        "tests": entries,
        "extra_data": extra,
    }


def summary_text(row: GradedRow, files: Sequence[str]) -> str:
    """The top-level output: the score, each part, what went wrong, what the review scan
    flagged, and the honesty note. The notes name the candidate's files, so they are
    cleaned (grader/engine/safe_text.py)."""
    if row.status in ("broken", "error"):
        return (f"This submission could not be graded: {clean(row.note)}\n"
                f"Hand in the exercise files ({', '.join(files)}), a folder holding them, or "
                "a zip of your workspace.")
    lines = [f"Score {points_of(row.score, row.max_score)}"]
    lines += [f"  {p.id} {p.title}: {points_of(p.score, p.max_score)}"
              for p in row.parts]
    for check in (c for p in row.parts for c in p.checks if c.not_applicable):
        first = check.message.partition("\n")[0]
        lines.append(f"Not graded on this machine: {check.id} ({clean(first)})")
    if row.notes:
        lines.append("Notes: " + clean(row.note))
    if row.flags:
        lines.append(clean(flags_line(row.flags)))
    lines.append(HONESTY_NOTE)
    return "\n".join(lines)


class GradescopeWriter(BatchListener):
    """Keeps results.json at `path` up to date while one submission is graded."""

    def __init__(self, path: Path, visibility: str, extra: dict[str, Any],
                 files: Sequence[str], clock: Callable[[], float] = time.monotonic) -> None:
        self.path = path
        self.files = files
        self.visibility = visibility
        self.extra = extra
        self._clock = clock
        self._began = clock()
        self._parts: list[PartResult] = []

    def _write(self, parts: Sequence[PartResult], output: str, complete: bool) -> None:
        extra = {**self.extra, "complete": complete}
        # Every string valid, so that the file is written whatever a check holds.
        write_json_atomic(self.path, valid_tree(document(parts, output,
                                                         self._clock() - self._began,
                                                         self.visibility, extra)))

    def started(self, paths: Sequence[str]) -> None:
        self._write([], "Grading started but no part has finished: the grader stopped early "
                    "(a crash or a time limit). Please resubmit or contact the instructor.",
                    complete=False)

    def part_done(self, index: int, part: PartResult) -> None:
        self._parts.append(part)
        done = ", ".join(p.id for p in self._parts)
        self._write(self._parts, f"Partial results (graded so far: {done}). The grader "
                    "stopped before finishing the remaining parts; please resubmit or contact "
                    "the instructor.", complete=False)

    def finished(self, index: int, row: GradedRow) -> None:
        self._write(row.parts, summary_text(row, self.files), complete=True)
