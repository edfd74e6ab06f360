"""Rendering of the instructor commands, into a StringIO at a fixed width, without colour."""

from __future__ import annotations

import csv
import io
from io import StringIO
from pathlib import Path

from rich.console import Console

from grader.coach.batch import GradedRow, GradingConfig
from grader.coach.review import scan_source
from grader.engine.results import CheckResult, PartResult
from grader.engine.secret import Seeding
from grader.engine.workspace import Settings
from grader.render.instructor_report import BatchProgress, batch_csv, render_batch

from helpers import PREFIX, matches_golden


def console(terminal: bool = False) -> Console:
    return Console(file=StringIO(), width=120, color_system=None, force_terminal=terminal)


def part(part_id: str, score: float, max_score: float) -> PartResult:
    status = "passed" if score == max_score else "failed"
    return PartResult(part_id, part_id, [CheckResult(f"{part_id}.x", "x", status,  # type: ignore[arg-type]
                                                     score, max_score)])


CONFIG = GradingConfig(Settings(PREFIX, "torch", enabled=("part1", "part2"),
                                points={"part1": 60}), seed=9, timeout_s=5.0)
ROWS = [
    GradedRow("subs/ann", "graded", [part("part1", 60, 60), part("part2", 15, 15)], 75.0,
              "torch"),
    GradedRow("subs/ben.zip", "broken", [part("part1", 0, 60), part("part2", 0, 15)], 75.0,
              "torch", ["not a readable zip file"]),
    GradedRow("subs/cy", "graded", [part("part1", 0, 60), part("part2", 7.5, 15)], 75.0,
              "torch", ["part1: could not import part1_inplace.py: SyntaxError"]),
]


def test_the_batch_summary_shows_points_totals_and_notes() -> None:
    out = console()
    render_batch(out, ROWS, CONFIG, Path("/course/grader.toml"))
    text = out.file.getvalue()  # type: ignore[attr-defined]
    assert text.startswith("settings from /course/grader.toml")
    assert "/60" in text and "/15" in text and "/75" in text
    ann = next(line for line in text.splitlines() if "subs/ann" in line)
    assert "60.0" in ann and "75.0" in ann and "graded" in ann
    assert "2 subs/ben.zip: not a readable zip file" in text
    assert "3 subs/cy: part1: could not import" in text
    assert "3 submissions (prefix-products round, torch flavor, seed 9): 1 with full marks, " \
        "1 that could not be" in text
    assert "strong evidence, not proof" in text


def test_csv_scores_per_part() -> None:
    lines = batch_csv(ROWS, CONFIG.parts).splitlines()
    assert lines[0] == "path,status,score,max_score,part1,part2,notes,flags"
    assert lines[3] == ("subs/cy,graded,7.5,75.0,0.0,7.5,part1: could not import "
                        "part1_inplace.py: SyntaxError,")


# A row whose every piece of text the candidate chose: the folder's name, a note naming a file
# of theirs, and code the review scan flags.
HOSTILE_NAME = "\x1b]52;c;ZXZpbA==\x07[link=http://evil]ann[/link]\x1b[2J"
HOSTILE_SOURCE = b"import subprocess as sp\nf = getattr(__import__('os'), 'fork')\n" \
    b"p = '/proc/self/fd/\x1b[31m'\n"
HOSTILE_ROW = GradedRow(
    HOSTILE_NAME, "graded", [part("part1", 60, 60), part("part2", 15, 15)], 75.0, "torch",
    ["\x1b[31m=HYPERLINK(\"http://evil\") is larger than 1 MiB"],
    flags=scan_source("\x9b2Jpart1_inplace.py", HOSTILE_SOURCE))


def test_what_a_candidate_chose_is_shown_as_written_without_control_sequences() -> None:
    out = console(terminal=True)
    render_batch(out, [HOSTILE_ROW], GradingConfig(Settings(PREFIX, "torch", enabled=(
        "part1", "part2"), points={"part1": 60}), seed=4, timeout_s=5.0,
        seeding=Seeding(4, "s3cret")), None)
    text = out.file.getvalue()  # type: ignore[attr-defined]
    assert "\x1b]" not in text and "\x1b[2J" not in text and "\x9b" not in text
    assert "\x1b]8;" not in text  # no hyperlink, though the terminal could show one
    plain = Console(file=StringIO(), width=120, color_system=None)
    render_batch(plain, [HOSTILE_ROW], GradingConfig(Settings(PREFIX, "torch", enabled=(
        "part1", "part2"), points={"part1": 60}), seed=4, timeout_s=5.0,
        seeding=Seeding(4, "s3cret")), None)
    assert matches_golden("batch-hostile-120.txt", plain.file.getvalue())  # type: ignore[attr-defined]




def test_csv_cells_that_would_run_as_formulas_are_quoted_but_scores_stay_numbers() -> None:
    rows = [
        GradedRow(name, "broken", [part("part1", 0, 60)], 60.0, "torch", [note])
        for name, note in [("=SUM(A1:A9)", "+1"), ("-1.5", "@cmd"), ("\tx", "-2"),
                           ("\r=x", "ok")]
    ] + [HOSTILE_ROW]
    lines = list(csv.reader(io.StringIO(batch_csv(rows, ["part1"]))))
    assert lines[1:5] == [
        ["'=SUM(A1:A9)", "broken", "0.0", "60.0", "0.0", "'+1", ""],
        ["'-1.5", "broken", "0.0", "60.0", "0.0", "'@cmd", ""],
        ["'\tx", "broken", "0.0", "60.0", "0.0", "'-2", ""],
        ["'=x", "broken", "0.0", "60.0", "0.0", "ok", ""],
    ]
    assert lines[5] == [
        "[link=http://evil]ann[/link]", "graded", "75.0", "75.0", "60.0",
        "'=HYPERLINK(\"http://evil\") is larger than 1 MiB",
        "part1_inplace.py:1 import subprocess: starts or signals processes; part1_inplace.py:2 "
        "__import__: runs or imports code chosen at run time; part1_inplace.py:2 os.fork: "
        "starts or signals processes; part1_inplace.py:3 control character U+001B: shows other "
        "than Python reads it: read the file's bytes (cat -A); part1_inplace.py:3 the string "
        "'/proc/self/fd/\\x1b[31m': names /proc, a way into other processes"]


def test_progress_counts_each_submission_once_whatever_its_parts_did() -> None:
    progress = BatchProgress(console(terminal=True), parts_per_submission=2)
    with progress:
        progress.started(["a", "b", "c"])
        progress.check_done(0, "part1", ROWS[0].parts[0].checks[0])
        assert progress.progress.tasks[0].fields["tally"] == "1 running, 0 failed"
        progress.part_done(0, ROWS[0].parts[0])
        progress.part_done(0, ROWS[0].parts[1])
        progress.finished(0, ROWS[0])
        progress.finished(1, ROWS[1])  # broken: no part ever finished
        assert progress.progress.tasks[0].fields["tally"] == "0 running, 1 failed"
        progress.part_done(2, ROWS[2].parts[0])
        task = progress.progress.tasks[0]
        assert task.total == 3 and task.completed == 2.5
        progress.finished(2, ROWS[2])
    assert progress.progress.tasks[0].completed == 3
