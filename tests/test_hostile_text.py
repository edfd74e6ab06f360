"""One submission cannot break another's row, or the batch's outputs (issue 19, item 4).

Text a submission controls (what its code printed and raised, the names of its files and
folders, its zip members, the flavor its grader.toml names, anything in a frame from its child)
is made valid, bounded text once, where it enters the judge: grader.runner.protocol's
received_frame, grader.coach.submissions.stage, CheckResult.from_wire. Every writer (the terminal
scorecard and grade table, --json, --csv, the cohort report, Gradescope's results.json,
Classroom's base64 line) still writes whatever str it is given. A corpus of hostile names and
messages goes through every writer at once: first raw, straight into result objects (defence in
depth), then through the entry points, and last through the real `grader grade`, with and
without the sandbox, on a folder of an honest and a hostile submission.
"""

from __future__ import annotations

import base64
import csv
import io
import json
import os
import pickle
import shutil
import subprocess
import threading
import time
import zipfile
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from rich.console import Console

from grader.coach import classroom
from grader.coach.batch import GradedRow, GradingConfig, batch_document, graded_row, review_flags
from grader.coach.cohort import read_results
from grader.coach.gradescope import GradescopeWriter
from grader.coach.submissions import Staged, expand, stage
from grader.engine.results import CheckResult, PartResult, RunResult, bound_output
from grader.engine.safe_text import (
    CHECK_MESSAGE_LIMIT,
    CHECK_OUTPUT_LIMIT,
    DATA_TEXT_LIMIT,
    MESSAGE_LIMIT,
    OUTPUT_LIMIT,
    PART_OUTPUT_LIMIT,
    WHERE_LIMIT,
)
from grader.engine.workspace import Settings
from grader.render import report
from grader.render.instructor_report import BatchProgress, batch_csv, batch_json, render_batch
from grader.runner.children import next_frame
from grader.runner.protocol import (
    NESTING,
    read_frame,
    received_data,
    received_frame,
    until,
    write_frame,
)

from helpers import NO_SANDBOX, PREFIX, REPO, needs_sandbox, run_grader

# --- the corpus ------------------------------------------------------------------------------

BYTES_NAME = os.fsdecode(b"sub-\xff\xfe-\xc3")  # a folder name that is not UTF-8
HOSTILE = [
    "high \ud800 and low \udfff lone surrogates",
    "a byte that was not UTF-8: \udcff",
    BYTES_NAME,
    "NUL \x00 inside",
    "\x1b[2J\x1b]52;c;ZXZpbA==\x07\x1b]8;;http://evil\x1b\\link\x1b]8;;\x1b\\\x9b31m",
    "bidi \u202egpj.py\u2066x\u2069",
    "[bold red]markup[/] [link=http://evil]click[/link] :smile:",
    "=HYPERLINK(\"http://evil\",\"x\")", "+1", "-2", "@SUM(A1)", "\t=1", "\r=1",
    "n" * 5000,  # a very long file name
    "name with\nnew lines\r\nand\rreturns",
    "=\ud800\x00\x1b[31m\u202e[b]x[/b]\n",  # all at once
]
LONG = "y" * 10_000_000  # a 10 MB line
CONTROL = [chr(c) for c in (*range(0x00, 0x09), *range(0x0b, 0x20), *range(0x7f, 0xa0))]
BIDI = "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
CONFIG = GradingConfig(Settings(PREFIX, "torch", enabled=("part1", "part2")), seed=5,
                       timeout_s=5.0)


def strict_console(terminal: bool = False) -> tuple[Console, io.BytesIO]:
    """A console that writes UTF-8 strictly, as a real stdout does (a StringIO takes lone
    surrogates, a terminal does not)."""
    raw = io.BytesIO()
    stream = io.TextIOWrapper(raw, encoding="utf-8", errors="strict", write_through=True)
    return Console(file=stream, width=120, color_system=None, force_terminal=terminal), raw


def check(check_id: str, text: str, status: str = "failed") -> CheckResult:
    return CheckResult(check_id, f"title {text[:50]}", status, 0.0, 10.0,  # type: ignore[arg-type]
                       message=text, hint=f"hint: {text}", duration_s=0.25, output=text)


def hostile_parts(texts: list[str]) -> list[PartResult]:
    """part1 and part2 of the round, each check carrying one text of the corpus everywhere a
    check holds text, and one check that passed."""
    parts = []
    for part_id in ("part1", "part2"):
        checks = [check(f"{part_id}.c{i}", text) for i, text in enumerate(texts)]
        checks.append(CheckResult(f"{part_id}.fine", "fine", "passed", 10.0, 10.0))
        parts.append(PartResult(part_id, PREFIX.part(part_id).title, checks))
    return parts


def hostile_rows(texts: list[str]) -> list[GradedRow]:
    flags = [{"file": text, "line": 1, "rule": "socket", "construct": text, "reason": text}
             for text in texts]
    rows = [GradedRow(f"subs/{text}", "graded", hostile_parts(texts), 40.0, "torch",
                      [text, f"part1: {text}"], flags=flags)  # type: ignore[arg-type]
            for text in texts]
    honest = GradedRow("subs/honest", "graded",
                       [PartResult(p, p, [CheckResult(f"{p}.ok", "ok", "passed", 20.0, 20.0)])
                        for p in ("part1", "part2")], 40.0, "torch", flags=[])
    return [honest, *rows]


def write_everything(rows: list[GradedRow], folder: Path) -> dict[str, bytes]:
    """Every writer at once, each as the CLI uses it; what each wrote, as bytes."""
    written: dict[str, bytes] = {}
    table, raw = strict_console()
    render_batch(table, rows, CONFIG, None)
    written["table"] = raw.getvalue()
    written["json"] = batch_json(rows, CONFIG).encode()
    written["csv"] = batch_csv(rows, CONFIG.parts).encode()  # strict, as cli.grade does
    pytest.importorskip("jinja2")
    pytest.importorskip("matplotlib")
    from grader.render.cohort_report import write_report

    write_report(folder / "report.html", batch_document(rows, CONFIG))
    written["report"] = (folder / "report.html").read_bytes()
    gradescope = folder / "results.json"
    writer = GradescopeWriter(gradescope, "visible", {"round": "prefix-products"},
                              [p.file for p in PREFIX.parts])
    writer.started([row.path for row in rows])
    for part in rows[-1].parts:
        writer.part_done(0, part)
    writer.finished(0, rows[-1])
    written["gradescope"] = gradescope.read_bytes()
    progress_console, progress_raw = strict_console(terminal=True)
    with BatchProgress(progress_console, 2) as progress:
        progress.started([row.path for row in rows])
        for index, row in enumerate(rows):
            progress.check_done(index, "part1", row.parts[0].checks[0])
            progress.part_done(index, row.parts[0])
            progress.finished(index, row)
    written["progress"] = progress_raw.getvalue()
    for index, row in enumerate(rows):
        if 0 < index < len(rows) - 1:
            continue  # every hostile row's checks hold the whole corpus: the last one will do
        result = RunResult("prefix-products", "torch", 5, row.parts)
        scorecard, raw = strict_console()
        report.render_scorecard(scorecard, result)
        written[f"scorecard-{index}"] = raw.getvalue()
        written[f"check-json-{index}"] = report.render_json(result).encode()
        written[f"classroom-{index}"] = classroom.encode(classroom.document(result)).encode()
    return written


def assert_sound(written: dict[str, bytes], rows: int) -> None:
    """Every output is there, valid UTF-8, parses, and shows no control sequence."""
    for name, data in written.items():
        text = data.decode("utf-8")  # strict: no writer let a surrogate through
        assert "\x00" not in text, name
        if name.startswith(("table", "scorecard", "report", "csv")):  # not the progress
            # bar, which moves the cursor
            assert not any(c in text for c in CONTROL if c not in "\r"), name
            assert not any(c in text for c in BIDI), name
    doc = json.loads(written["json"])
    assert len(doc["submissions"]) == rows
    json.dumps(doc, ensure_ascii=False).encode("utf-8")  # no escaped lone surrogate either
    assert doc["submissions"][0]["score"] == doc["submissions"][0]["max_score"] == 40.0
    lines = list(csv.reader(io.StringIO(written["csv"].decode())))
    assert len(lines) == rows + 1 and lines[1][:4] == ["subs/honest", "graded", "40.0", "40.0"]
    for line in lines[1:]:
        assert not any(cell.startswith(("=", "+", "-", "@", "\t")) for cell in line), line
    gradescope = json.loads(written["gradescope"])
    assert gradescope["extra_data"]["complete"] is True and gradescope["tests"]
    for name, data in written.items():
        if name.startswith("check-json"):
            json.loads(data)
        if name.startswith("classroom"):
            json.loads(base64.b64decode(data))
    assert b"<html" in written["report"]


def test_every_writer_survives_any_text_it_is_given(tmp_path: Path) -> None:
    """Defence in depth: the corpus raw, straight into rows and results, as if no entry point
    had made it valid (a 20 kB line stands in for the 10 MB one, which the writers are never
    handed: see the next test)."""
    rows = hostile_rows([*HOSTILE, "z" * 20_000])
    written = write_everything(rows, tmp_path)
    assert_sound(written, len(rows))
    # markup shown as written, never read as markup (a long line may wrap anywhere)
    for name in ("table", f"scorecard-{len(rows) - 1}"):
        assert "[boldred]markup[/]" in "".join(written[name].decode().split()), name
    assert "[bold red]markup[/]" in json.loads(written["json"])["submissions"][1]["notes"][0] \
        or any("[bold red]markup[/]" in s["path"] for s in json.loads(written["json"])[
            "submissions"])


def test_a_row_made_at_the_entry_points_is_bounded_in_every_writer(tmp_path: Path) -> None:
    """The corpus with the 10 MB line, as results arrive (CheckResult.from_wire), as a
    submission's name and notes arrive (stage), with each part's printed output capped: every
    output stays small."""
    texts = [*HOSTILE, LONG]
    parts = [PartResult(p.id, p.title, [CheckResult.from_wire(vars(c)) for c in p.checks])
             for p in hostile_parts(texts)]
    for part in parts:
        for made in part.checks:
            assert len(made.message) <= CHECK_MESSAGE_LIMIT + 50
            assert len(made.output) <= CHECK_OUTPUT_LIMIT + 50
    source = tmp_path / "subs" / BYTES_NAME
    source.mkdir(parents=True)
    staged = stage(source, tmp_path / "stage", PREFIX)
    assert staged.root is None and staged.source.endswith("sub-\\xff\\xfe-\\xc3")
    row = graded_row(Staged(staged.source, tmp_path, notes=(received_note(LONG),)), CONFIG,
                     RunResult("prefix-products", "torch", 5, parts))
    assert sum(len(c.output) for p in row.parts for c in p.checks) <= 2 * (PART_OUTPUT_LIMIT
                                                                            + 500)
    written = write_everything([hostile_rows([])[0], row], tmp_path)
    assert_sound(written, 2)
    for name, data in written.items():
        assert len(data) < 1_000_000, (name, len(data))
    assert "sub-\\xff\\xfe-\\xc3" in json.loads(written["json"])["submissions"][1]["path"]


def received_note(text: str) -> str:
    from grader.engine.safe_text import NOTE_LIMIT, received

    return received(text, NOTE_LIMIT, inline=True)


def test_the_cohort_report_of_a_saved_document_holding_lone_surrogates(tmp_path: Path) -> None:
    """`grader report` of a results file written before text was made valid (JSON escapes a
    lone surrogate, and reads it back as one)."""
    pytest.importorskip("jinja2")
    pytest.importorskip("matplotlib")
    from grader.render.cohort_report import write_report

    saved = tmp_path / "results.json"
    saved.write_text(json.dumps(batch_document(hostile_rows(HOSTILE[:3]), CONFIG)))
    assert "\\ud800" in saved.read_text()
    write_report(tmp_path / "report.html", read_results(saved))
    page = (tmp_path / "report.html").read_text(encoding="utf-8")
    assert "high \ufffd and low \ufffd" in page and "sub-\\xff\\xfe-\\xc3" in page


def test_a_parts_printed_output_is_capped_earliest_checks_first() -> None:
    part = PartResult("part1", "p", [check(f"part1.c{i}", "o" * 6000) for i in range(5)])
    bound_output([part])
    kept = [len(c.output) for c in part.checks]
    assert kept[:2] == [6000, 6000] and sum(kept) < PART_OUTPUT_LIMIT + 300
    assert part.checks[2].output.startswith("o" * 4384 + "\n... (1616 more characters")
    assert part.checks[3].output.startswith("... (6000 more characters not shown")


# --- frames, as the judge receives them --------------------------------------------------------


def as_received(sent: Any) -> dict[str, Any]:
    """received_frame of what a frame carrying `sent` would be."""
    return received_frame(sent, len(pickle.dumps(sent)))


def test_a_frame_is_read_into_a_typed_record_of_valid_bounded_text() -> None:
    frame = as_received({
        "kind": "error", "index": True, "duration_s": float("nan"), "output": LONG,
        "message": "\ud800" * 5000, "where": "w" * 10_000, "extra": "dropped",
        "data": {"\udcff": ["x" * 100_000, ("\x00", np.arange(3)), {"\ud800"}], "n": 1.5},
    })
    assert frame["kind"] == "error" and frame["index"] == -1 and frame["duration_s"] == 0.0
    assert set(frame) == {"kind", "index", "duration_s", "output", "message", "where", "data"}
    assert frame["output"] == "y" * OUTPUT_LIMIT + \
        f"\n... ({len(LONG) - OUTPUT_LIMIT} more characters not shown)"
    assert frame["message"].startswith("\ufffd" * MESSAGE_LIMIT + "\n... (3000 more")
    assert frame["where"].startswith("w" * WHERE_LIMIT + "\n... (9500 more")
    data = frame["data"]
    assert list(data) == ["\\xff", "n"]
    text, (nul, array), surrogates = data["\\xff"]
    assert text.startswith("x" * DATA_TEXT_LIMIT + "\n... (") and nul == ""
    assert isinstance(array, np.ndarray) and surrogates == {"\ufffd"}


@pytest.mark.parametrize("duration", [float("inf"), -1.0, "1", 10 ** 400, None, True])
def test_a_duration_that_is_no_finite_count_of_seconds_reads_as_zero(duration: Any) -> None:
    assert as_received({"kind": "observation", "duration_s": duration})["duration_s"] == 0.0


def test_data_with_nothing_to_change_is_the_same_object() -> None:
    data = {"a": [1.0, 2.0, "text"], "b": (np.zeros(2), "ünï")}
    assert received_data(data, len(pickle.dumps(data))) is data


@pytest.mark.parametrize("sent", [["not", "a", "dict"], {"kind": "forged"}, {"no": "kind"}])
def test_what_is_no_frame_reads_as_an_unreadable_result(sent: Any) -> None:
    with pytest.raises(pickle.UnpicklingError):
        as_received(sent)
    read_fd, write_fd = os.pipe()
    write_frame(write_fd, sent)
    os.close(write_fd)

    class Pipe:
        fd = read_fd

    frame = next_frame(Pipe(), 5.0)  # type: ignore[arg-type]
    os.close(read_fd)
    assert frame is not None and frame["kind"] == "error"
    assert frame["message"].startswith("unreadable result from the child process")


def test_a_hostile_frame_through_a_pipe() -> None:
    """What a child whose capture was lifted sends, as the worker reads it."""
    read_fd, write_fd = os.pipe()
    os.set_blocking(write_fd, True)
    sent = {"kind": "import_error", "message": "lone \ud800" + "m" * 50_000,
            "output": "\x00\udcff" + LONG}
    writer = threading.Thread(target=lambda: (write_frame(write_fd, sent), os.close(write_fd)))
    writer.start()
    try:
        frame = read_frame(read_fd, until(time.monotonic() + 60))
    finally:
        writer.join()
        os.close(read_fd)
    assert frame is not None
    assert frame["message"].startswith("lone \ufffdmmm") and len(frame["message"]) < 2100
    assert frame["output"].startswith("\\xffyyy") and len(frame["output"]) < 4200


# --- names, as a submission hands them in ----------------------------------------------------

def reference_files(folder: Path) -> Path:
    (folder / "exercises").mkdir(parents=True)
    for source in (REPO / "reference" / "prefix-products" / "torch").glob("part*.py"):
        shutil.copy(source, folder / "exercises" / source.name)
    return folder


def test_names_that_are_not_utf8_make_valid_rows(tmp_path: Path) -> None:
    subs = tmp_path / "subs"
    weird = reference_files(subs / os.fsdecode(b"ann-\xff\n\x1b[2J\xe2\x80\xae"))
    (weird / "exercises" / os.fsdecode(b"spy-\xfe\n.py")).write_text("import socket\n")
    (weird / "grader.toml").write_text('flavor = "\\u001b[2J' + "f" * 5000 + '"\n')
    (subs / os.fsdecode(b"empty-\xff")).mkdir()
    entries = expand(subs, PREFIX)
    assert len(entries) == 2
    staged = [stage(entry, tmp_path / f"stage{i}", PREFIX) for i, entry in enumerate(entries)]
    texts = [s.source for s in staged] + [s.problem or "" for s in staged] + \
        [n for s in staged for n in s.notes] + [staged[0].declared_flavor or ""]
    for text in texts:
        text.encode("utf-8")
        assert "\x00" not in text
    assert staged[0].source.endswith("ann-\\xff\\n\\u001b[2J\\u202e")  # nothing hidden
    assert staged[0].root is not None and len(staged[0].declared_flavor or "") < 200
    assert staged[1].root is None and staged[1].source.endswith("empty-\\xff")
    flags, note = review_flags(staged[0].root / "exercises")
    assert note is None and flags
    assert {"file": "spy-\\xfe\\n.py", "line": 1, "construct": "import socket"}.items() \
        <= next(f for f in flags if f["file"].startswith("spy")).items()


def zipped(path: Path, name: bytes, utf8_flag: bool) -> Path:
    """A zip of one member named by these bytes, with or without the UTF-8 flag: written under
    a placeholder name of the same length, which is then replaced in the local and the central
    header alike (no API of the zip module writes such a name)."""
    placeholder = b"Q" * len(name)
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr(placeholder.decode(), b"x = 1\n")
    raw = bytearray(path.read_bytes().replace(placeholder, name))
    if utf8_flag:  # bit 11 of the general purpose flags, in each header
        for signature, offset in ((b"PK\x03\x04", 6), (b"PK\x01\x02", 8)):
            raw[raw.find(signature) + offset + 1] |= 0x08
    path.write_bytes(bytes(raw))
    return path


def test_zip_member_names_that_are_not_what_the_zip_says_make_a_row_of_their_own(
        tmp_path: Path) -> None:
    """Names patched into the archive's bytes, as no API of the zip module writes them: invalid
    UTF-8 under the UTF-8 flag, control characters (read as cp437), NUL."""
    cases = {
        "utf8": (zipped(tmp_path / "utf8.zip", b"ex/\xff\xfe1.py", True), "not the UTF-8"),
        "ctrl": (zipped(tmp_path / "ctrl.zip", b"e\x1b[2J\n.py", False), "no exercise files"),
    }
    for name, (path, problem) in cases.items():
        staged = stage(path, tmp_path / f"stage-{name}", PREFIX)
        assert staged.root is None and problem in (staged.problem or ""), (name, staged)
        (staged.problem or "").encode("utf-8")
    # the zip module ends a name at its first NUL
    nul = zipped(tmp_path / "nul.zip", b"part1_inplace.py\x00\x1b[2J", False)
    staged = stage(nul, tmp_path / "stage-nul", PREFIX)
    assert staged.root is not None and (staged.root / "exercises" / "part1_inplace.py").is_file()


# --- the real `grader grade`, on an honest and a hostile submission --------------------------

HOSTILE_PART1 = r'''"""Lifts the cap the child keeps in this process, prints 10 MB with
control sequences, and raises messages holding lone surrogates and NUL."""
import sys

sys.stdout.limit = 10 ** 9  # the capture's cap lives in the candidate's own process
print("\x1b]52;c;ZXZpbA==\x07[bold red]import[/] \u202e\x00" + "y" * 10_000_000)
EXPLANATION = "lone \ud800 high, \udfff low, \udcff byte; " + "z" * 200_000


def prefix_products_out(W, P):
    sys.stdout.limit = 10 ** 9
    print("\x1b[2J\x00\ud800" + "x" * 10_000_000)
    raise RuntimeError("lone \ud800 surrogate \udcff \x00 [link=http://evil]x[/link] " * 50)
'''
HOSTILE_FOLDER = b"hostile-\xff\xfe-\x1b[2J-\xe2\x80\xae-\n-name"
GRADE_CONFIG = 'flavor = "torch"\nparts = ["part1", "part2"]\ntimeout = 60\n'
FULL_MARKS = 35.0  # part1 (20) and part2 (15) at their default points


def submissions(tmp: pytest.TempPathFactory) -> tuple[Path, Path, Path]:
    """subs/ holding an honest workspace made by `grader init` with the references copied in,
    a hostile one in a folder whose name is not UTF-8, and the honest one again under a
    grader.toml naming a hostile flavor (refused, its note bounded); and the instructor's
    grader.toml."""
    root = tmp.mktemp("hostile-batch")
    subs = root / "subs"
    subs.mkdir()
    made = run_grader("init", "--round", "prefix-products", "--flavor", "torch",
                      subs / "honest", cwd=root)
    assert made.returncode == 0, made.stderr
    for source in (REPO / "reference" / "prefix-products" / "torch").glob("part*.py"):
        shutil.copy(source, subs / "honest" / "exercises" / source.name)
    hostile = subs / os.fsdecode(HOSTILE_FOLDER)
    shutil.copytree(subs / "honest", hostile)
    (hostile / "exercises" / "part1_inplace.py").write_text(HOSTILE_PART1)
    (hostile / "exercises" / os.fsdecode(b"spy-\xfe\n.py")).write_text("import socket\n")
    impostor = subs / "impostor"
    shutil.copytree(subs / "honest", impostor)
    (impostor / "grader.toml").write_text('flavor = "torch\\u001b[2J' + "f" * 5000 + '"\n')
    config = root / "grader.toml"
    config.write_text(GRADE_CONFIG)
    return subs, hostile, config


def graded(tmp: pytest.TempPathFactory, *options: str) -> dict[str, Any]:
    """`grade subs --csv --report` with these options (run once per test process), and what
    it wrote."""
    subs, _, config = submissions(tmp)
    out = subs.parent
    done = run_grader("grade", subs, *options, "--csv", out / "grades.csv", "--report",
                      out / "report.html", "--config", config, "--seed", "3", cwd=out,
                      env={"COLUMNS": "200"})
    return {"done": done, "out": out}


def graded_unsandboxed(tmp: pytest.TempPathFactory) -> dict[str, Any]:
    return graded(tmp, "--no-sandbox", "--json")


def graded_in_the_sandbox(tmp: pytest.TempPathFactory) -> dict[str, Any]:
    """In the sandbox, the table instead of --json (a plain `grade` used to fail after it)."""
    return graded(tmp)


def graded_for_gradescope(tmp: pytest.TempPathFactory) -> dict[str, Any]:
    """The hostile submission alone (--gradescope grades one) with every output at once."""
    _, hostile, config = submissions(tmp)
    out = hostile.parent.parent
    done = run_grader("grade", hostile, "--gradescope", out / "results.json", "--json",
                      "--csv", out / "grades.csv", "--report", out / "report.html", "--config",
                      config, "--seed", "3", "--no-sandbox", cwd=out)
    return {"done": done, "out": out}


JOBS = (graded_unsandboxed, graded_for_gradescope,
         *(() if NO_SANDBOX else (graded_in_the_sandbox,)))


def assert_written(done: subprocess.CompletedProcess[str], out: Path, rows: int,
                   as_json: bool = True) -> dict[str, Any]:
    """Every output is there, parses, is small, and shows no lone surrogate or control."""
    assert done.returncode == 0, done.stderr[-3000:]
    assert len(done.stdout) < 1_000_000
    doc = json.loads(done.stdout) if as_json else {}
    if as_json:
        assert len(doc["submissions"]) == rows
        json.dumps(doc, ensure_ascii=False).encode("utf-8")
    grades = (out / "grades.csv").read_bytes()
    assert len(grades) < 10_000
    lines = list(csv.reader(io.StringIO(grades.decode("utf-8"))))
    assert len(lines) == rows + 1
    page = (out / "report.html").read_bytes()
    assert len(page) < 1_000_000, len(page)
    text = page.decode("utf-8")
    assert not any(c in text for c in CONTROL if c not in "\r")
    assert not any(c in text for c in BIDI)
    return doc


def assert_hostile_row(row: dict[str, Any]) -> None:
    assert row["path"].endswith("hostile-\\xff\\xfe-\\u001b[2J-\\u202e-\\n-name")
    assert row["status"] == "graded"
    [part1, part2] = row["parts"]
    assert part1["score"] == 0.0 and part2["score"] == part2["max_score"] == 15.0
    messages = [c["message"] for c in part1["checks"]]
    assert any("lone \ufffd surrogate \\xff" in m for m in messages), messages[0][:500]
    assert any("more characters not shown" in m for m in messages)
    assert all(len(m) < CHECK_MESSAGE_LIMIT + CHECK_OUTPUT_LIMIT + 200 for m in messages)
    assert any(f["file"] == "spy-\\xfe\\n.py" for f in row["flags"])


def assert_impostor_row(row: dict[str, Any]) -> None:
    """Its grader.toml names a flavor the round does not have: not graded, and the note that
    says so quotes the flavor bounded and safe."""
    assert row["path"].endswith("subs/impostor") and row["status"] == "mismatch"
    assert row["score"] == 0.0 and row["max_score"] == FULL_MARKS
    (note,) = row["notes"]
    assert note.startswith("not graded: its grader.toml says flavor torch\\u001b[2Jfff")
    assert "more characters not shown" in note and len(note) < 1000
    checks = [c for p in row["parts"] for c in p["checks"]]
    assert checks and all(c["status"] == "error" and c["message"].startswith(note)
                          for c in checks)


def assert_honest_row(row: dict[str, Any]) -> None:
    assert row["path"].endswith("subs/honest") and row["status"] == "graded"
    assert row["score"] == row["max_score"] == FULL_MARKS
    assert {c["status"] for p in row["parts"] for c in p["checks"]} == {"passed"}


@pytest.mark.slow
def test_grade_writes_every_output_for_everyone_beside_a_hostile_submission(grading) -> None:  # type: ignore[no-untyped-def]
    ran = grading.once(graded_unsandboxed)
    doc = assert_written(ran["done"], ran["out"], rows=3)
    honest, hostile, impostor = doc["submissions"]  # in the order of their folders' names
    assert_honest_row(honest)
    assert_impostor_row(impostor)
    assert_hostile_row(hostile)
    lines = list(csv.reader(io.StringIO((ran["out"] / "grades.csv").read_text())))
    assert lines[1][:6] == [honest["path"], "graded", "35.0", "35.0", "20.0", "15.0"]


@pytest.mark.slow
def test_gradescope_and_every_other_output_at_once_for_a_hostile_submission(grading) -> None:  # type: ignore[no-untyped-def]
    ran = grading.once(graded_for_gradescope)
    doc = assert_written(ran["done"], ran["out"], rows=1)
    assert_hostile_row(doc["submissions"][0])
    results = (ran["out"] / "results.json").read_bytes()
    assert len(results) < 1_000_000
    gradescope = json.loads(results)
    assert gradescope["extra_data"]["complete"] is True and gradescope["score"] == 15.0
    shown = [gradescope["output"], *(t["output"] for t in gradescope["tests"])]
    for said in shown:
        said.encode("utf-8")
        assert not any(c in said for c in CONTROL) and not any(c in said for c in BIDI)


@pytest.mark.slow
@needs_sandbox
def test_the_sandboxed_grade_writes_every_output_and_the_table_for_everyone_too(grading) -> None:  # type: ignore[no-untyped-def]
    ran = grading.once(graded_in_the_sandbox)
    assert_written(ran["done"], ran["out"], rows=3, as_json=False)
    table = ran["done"].stdout
    assert not any(c in table for c in CONTROL) and not any(c in table for c in BIDI)
    honest = next(line for line in table.splitlines() if "subs/honest" in line)
    assert "20.0" in honest and "15.0" in honest and "35.0" in honest and "graded" in honest
    assert "hostile-\\xff\\xfe-" in table and "mismatch" in table
    assert "3 submissions (prefix-products round, torch flavor" in table
    assert "1 with full marks" in table and "flagged for review" in table
    lines = list(csv.reader(io.StringIO((ran["out"] / "grades.csv").read_text())))
    assert lines[1][1:6] == ["graded", "35.0", "35.0", "20.0", "15.0"]
    assert lines[2][1:6] == ["graded", "15.0", "35.0", "0.0", "15.0"]
    assert lines[3][1:6] == ["mismatch", "0.0", "35.0", "0.0", "0.0"]


def test_data_that_a_walk_would_take_forever_over_is_refused_at_once() -> None:
    """Sixty lists each holding the next one twice pickle to a few hundred bytes, and a walk
    over them meets 2**60 values: the judge counts what it meets and gives up past its
    budget, so no frame costs the judge more than that budget, whatever its shape."""
    import pickle

    from grader.runner.protocol import DATA_NODES

    bomb: list[object] = [1]
    for _ in range(60):
        bomb = [bomb, bomb]
    assert len(pickle.dumps(bomb)) < 1000
    with pytest.raises(pickle.UnpicklingError, match=f"more than {DATA_NODES} values"):
        received_frame({"kind": "observation", "index": 0, "data": bomb}, len(pickle.dumps(bomb)))
    wide = list(range(DATA_NODES - 1))
    # as much as the budget allows is taken as it is
    assert received_data(wide, len(pickle.dumps(wide))) is wide


def _global(module: str, name: str) -> bytes:
    """A pickle whose whole content is one global by name (protocol 0's GLOBAL)."""
    return f"c{module}\n{name}\n.".encode()


@pytest.mark.parametrize(("module", "name"), [
    ("numpy.f2py.__main__", "XDType"),        # an allowed-looking name in a module not loaded
    ("numpy.conftest", "FloatDType"),
    ("numpy.testing", "assert_equal"),        # a real function of a numpy module
    ("numpy", "load"),
    ("numpy.dtypes", "__class__"),            # not a dtype class
    ("os", "system"),
    ("builtins", "eval"),
    ("numpy.core.multiarray", "_reconstruct"),  # an allowed name, its module never imported
    ("grader_not_a_module", "ndarray"),
])
def test_no_name_in_a_frame_makes_the_receiver_import_or_run_anything(
        module: str, name: str) -> None:
    """What a child may name is resolved only among what the receiver has already imported,
    from an exact list: a name cannot import a module (and so run its top level) in the judge,
    whatever it looks like."""
    import sys

    loaded_before = set(sys.modules)
    with pytest.raises(pickle.UnpicklingError, match="refusing to unpickle"):
        read_frame_from(_global(module, name))
    assert set(sys.modules) == loaded_before


class _Unfilled:
    """Pickles as numpy's own array constructor called with a shape and nothing to fill it."""

    def __init__(self, size: int) -> None:
        self.size = size

    def __reduce__(self) -> tuple[Any, ...]:
        reconstruct = np.empty(0).__reduce__()[0]  # this numpy's own, whatever its module
        return (reconstruct, (np.ndarray, (self.size,), b"b"))


def test_a_frame_cannot_make_arrays_larger_than_itself_in_the_judge() -> None:
    """An array's bytes travel in the frame; one made from a shape alone would be allocated,
    then touched by every comparison, in the judge: 134 bytes asking for 4 GB are refused, and
    an honest array sent twice (one object) is read."""
    bomb = pickle.dumps({"kind": "observation", "data": {"yours": _Unfilled(4_000_000_000)}})
    assert len(bomb) < 200
    with pytest.raises(pickle.UnpicklingError, match="more bytes than"):
        read_frame_from(bomb)
    twice = np.arange(5_000.0)  # under a pipe's 64 KiB, which read_frame_from fills first
    frame = read_frame_from(pickle.dumps({"kind": "observation", "data": [twice, twice]}))
    assert np.array_equal(frame["data"][0], twice) and frame["data"][0] is frame["data"][1]


def _encoded(codec: str, times: int) -> bytes:
    """A pickle that calls _codecs.encode `times` deep around a short text, with `codec`."""
    name = codec.encode()
    return (b"\x80\x04" + b"c_codecs\nencode\n" * times + b"X\x04\x00\x00\x00abcd"
            + (b"X" + len(name).to_bytes(4, "little") + name + b"\x86R") * times + b".")


@pytest.mark.parametrize("codec", ["hex", "bz2", "zlib", "base64", "rot13", "utf-16"])
def test_a_short_frame_cannot_expand_or_work_in_the_judge_through_a_codec(codec: str) -> None:
    """pickle needs `_codecs.encode` only to write bytes as latin-1 text: any other codec is
    refused before it runs (hex doubles a frame at each level: 40 levels of a 600-byte frame
    would ask the judge for terabytes)."""
    import sys

    loaded_before = set(sys.modules)
    with pytest.raises(pickle.UnpicklingError, match="latin-1"):
        read_frame_from(_encoded(codec, 40))
    assert set(sys.modules) == loaded_before


def test_bytes_written_as_latin1_text_still_read() -> None:
    from grader.runner.protocol import loads

    assert loads(_encoded("latin1", 1)) == b"abcd"
    assert loads(pickle.dumps(b"\x00\xffdata", protocol=2)) == b"\x00\xffdata"


def test_a_frame_whose_reconstruction_exits_is_an_unreadable_result_not_a_dead_worker(
        ) -> None:
    """SystemExit raised while a frame is read (by whatever the allow-list lets through) is
    the child's doing: it reads as garbage, and the receiver lives on."""
    from unittest import mock

    with mock.patch("grader.runner.protocol.loads", side_effect=SystemExit(2)), \
            pytest.raises(pickle.UnpicklingError, match="SystemExit"):
        read_frame_from(_global("numpy", "ndarray"))


def read_frame_from(payload: bytes) -> Any:
    """The frame `read_frame` makes of `payload`, sent on a pipe with the wire's header."""
    import struct

    read_fd, write_fd = os.pipe()
    os.write(write_fd, struct.pack("!Q", len(payload)) + payload)
    os.close(write_fd)
    try:
        return read_frame(read_fd, until(time.monotonic() + 5))
    finally:
        os.close(read_fd)


_COLLIDE = 2**61 - 1
"""k * _COLLIDE + 7 hashes to 7 for every k: an int's hash is its value modulo this prime."""


def _colliding(count: int) -> list[bytes]:
    """`count` distinct ints of one hash, each as a pickle opcode (LONG1)."""
    pushed = []
    for k in range(count):
        value = k * _COLLIDE + 7
        raw = value.to_bytes((value.bit_length() + 8) // 8, "little", signed=True)
        pushed.append(b"\x8a" + bytes([len(raw)]) + raw)
    return pushed


KEYS = _colliding(65)


@pytest.mark.parametrize("body", [
    b"\x8f(" + b"".join(KEYS) + b"\x90",                        # a set (ADDITEMS)
    b"(" + b"".join(KEYS) + b"\x91",                             # a frozenset
    b"}(" + b"".join(k + b"N" for k in KEYS) + b"u",             # a dict (SETITEMS)
    # A dict filled key by key (SETITEM), every other key after a round trip through the
    # memo: all of them count toward the one dict.
    b"}\x94" + b"".join((b"0h\x00" if i % 2 else b"") + k + b"Ns" for i, k in enumerate(KEYS)),
], ids=["set", "frozenset", "dict", "dict-key-by-key"])
def test_a_frame_cannot_make_the_judge_hash_for_ever(body: bytes) -> None:
    """A dict or set whose members a child chose to share one hash costs the judge time
    quadratic in their number, in C, where nothing can stop it: more than 64 such members in
    one container are refused before anything is built (300,000 of them, a 3.6 MB frame,
    are refused after 0.3 s of reading, where building them took the worker 100 s)."""
    with pytest.raises(pickle.UnpicklingError, match="not strings"):
        read_frame_from(b"\x80\x05" + body + b".")


DEEP = 20_000
"""Levels of nesting a hostile frame below sends: past NESTING, within a pipe's buffer."""


def _nested_from_the_top(levels: int) -> bytes:
    """A dict whose value is a list, then each level's list appended to the one before after
    that one was placed (fetched back from the memo): nested from the top down."""
    body = b"}K\x01]\x94"
    for level in range(1, levels + 1):
        body += b"j" + (level - 1).to_bytes(4, "little") + b"]\x94a0"
    return body + b"s"


@pytest.mark.parametrize(("body", "refused"), [
    (b"}K\x01" + b"\x85" * DEEP + b"Ns", "nested more than"),  # a key: a tuple in a tuple ...
    (b"(" * DEEP + b"N" + b"l" * DEEP, "nested more than"),      # lists in lists (MARK, LIST)
    (_nested_from_the_top(5000), "changed after it was placed"),
], ids=["tuple-key", "lists", "from-the-top"])
def test_a_frame_cannot_nest_deeper_than_the_judge_can_read(body: bytes, refused: str) -> None:
    """Hashing a key, comparing or freeing an object recurses in C: a tuple nested a million
    levels deep as a dict's key (a 1 MB frame) took the worker down with its stack. Objects
    nested deeper than NESTING are refused before anything is built, whichever opcodes nest
    them, and so is an object changed after it was placed in another (the way to nest from the
    top, unseen by a depth counted as objects are built); a frame nested as deep as probes'
    never are is read."""
    with pytest.raises(pickle.UnpicklingError, match=refused):
        read_frame_from(b"\x80\x05" + body + b".")
    tree: Any = 1.0
    for _ in range(NESTING - 2):
        tree = {"level": [tree]} if isinstance(tree, float) else [tree]
    assert read_frame_from(pickle.dumps({"kind": "observation", "data": tree}, protocol=5)) \
        is not None


def test_frames_as_probes_send_them_are_read() -> None:
    """Dicts keyed by names, small sets of numbers and of names, a tuple-keyed table of 64, a
    list of floats, arrays: read whole (within a pipe's size, written before it is read)."""
    frame = {"kind": "observation", "data": {
        "yours": [{"value": np.arange(4.0), "raised": None}] * 40, "seen": {1, 2, 3},
        "names": frozenset({"x", "y"}), "table": {(i, i + 1): i for i in range(64)},
        "losses": [float(i) for i in range(2_000)]}}
    read = read_frame_from(pickle.dumps(frame, protocol=pickle.HIGHEST_PROTOCOL))
    assert read["data"]["losses"][-1] == 1999.0 and read["data"]["table"][(63, 64)] == 63


def test_a_fifo_left_at_the_state_files_name_blocks_no_command(tmp_path: Path) -> None:
    """Code under test (or a person) can leave a FIFO where the workspace keeps its last results
    (.grader/last.json): `grader list` and `grader hint` read it as no state and go on, never
    waiting on a writer that will not come. (The red team's hang, 2026-12-07.)"""
    from grader.coach.selfcheck import write_exercises

    workspace = write_exercises(tmp_path / "ws", PREFIX, "numpy", "stubs")
    (workspace / "grader.toml").write_text(f'round = "{PREFIX.id}"\nflavor = "numpy"\n')
    (workspace / ".grader").mkdir(exist_ok=True)
    os.mkfifo(workspace / ".grader" / "last.json")
    listed = run_grader("list", cwd=workspace, timeout=30)
    assert listed.returncode == 0, listed.stdout + listed.stderr
    assert "part1" in listed.stdout
    hinted = run_grader("hint", "part1", cwd=workspace, timeout=30)
    assert hinted.returncode == 0, hinted.stdout + hinted.stderr
