"""`grader grade`: a batch of correct, wrong and broken submissions gets the right rows."""

from __future__ import annotations

import csv
import io
import json
import os
import shutil
import sys
import zipfile
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from grader import cli
from grader.coach import batch
from grader.coach.selfcheck import write_exercises
from grader.coach.submissions import (
    MAX_DIRECTORY_BYTES,
    MAX_FILE_BYTES,
    MAX_ZIP_MEMBERS,
    SharedFiles,
    SubmissionError,
    expand,
    find_exercise_folder,
    part_files,
    stage,
)
from grader.engine.results import PartResult
from grader.engine.rounds import get_round
from grader.engine.workspace import Settings
from grader.runner import GraderCrash, Worker

from helpers import (
    PREFIX,
    SESSION_ENV,
    LentWorker,
    lend_pool,
    run_grader,
    run_owned,
    validate_document,
)

CONFIG = """\
flavor = "torch"
parts = ["part1", "part2"]
timeout = 30
[points]
part1 = 60
part2 = 40
"""


NAMES = part_files(PREFIX)


def invoke(args: list[str]) -> Result:
    return CliRunner().invoke(cli.cli, args, env={"COLUMNS": "200"})


def reference_workspace(folder: Path) -> Path:
    """A candidate workspace holding the torch references (full marks)."""
    write_exercises(folder, PREFIX, "torch", "references")
    (folder / "grader.toml").write_text('flavor = "torch"\n')
    return folder


def loose_files(folder: Path) -> Path:
    """The four exercise files straight in a folder, as a candidate might upload them."""
    write_exercises(folder / "tmp", PREFIX, "torch", "references")
    for path in (folder / "tmp" / "exercises").glob("part*.py"):
        shutil.move(path, folder / path.name)
    shutil.rmtree(folder / "tmp")
    return folder


def zip_folder(folder: Path, target: Path, wrap: str | None = None) -> Path:
    with zipfile.ZipFile(target, "w") as archive:
        for path in sorted(folder.rglob("*")):
            if path.is_file():
                name = path.relative_to(folder).as_posix()
                archive.write(path, f"{wrap}/{name}" if wrap else name)
    return target


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new))


@pytest.fixture(scope="module")
def graded(grading, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:  # type: ignore[no-untyped-def]
    """One batch over every kind of submission, graded once for the whole module, in the
    session's worker."""
    root = tmp_path_factory.mktemp("batch")
    subs = root / "subs"
    subs.mkdir()
    correct = reference_workspace(subs / "correct")
    # A candidate's own grader.toml must not change what is graded, or for how many points.
    (correct / "grader.toml").write_text('flavor = "torch"\nparts = ["part2"]\n'
                                         "[points]\npart2 = 1000\n")
    # Code declared for numpy is not graded as the torch flavor the instructor pins.
    (reference_workspace(subs / "other_flavor") / "grader.toml").write_text('flavor = "numpy"\n')
    # Nor may what the review scan flags: this line is never run, and costs nothing.
    flagged = correct / "exercises" / "part2_out_of_place.py"
    flagged.write_text(flagged.read_text() + "\nimport os as _os\n_unused = getattr(_os, 'fork')\n")
    fork_line = len(flagged.read_text().splitlines())
    wrong = loose_files(subs / "wrong_order")
    # A grader.toml nested past the parser's recursion is unreadable, as if absent: the class
    # is still graded, this submission with it.
    (wrong / "grader.toml").write_text("flavor = " + "[" * 30000 + "]" * 30000 + "\n")
    edit(wrong / "part1_inplace.py", "P[i - 1] @ W[i]", "W[i] @ P[i - 1]")
    syntax = loose_files(subs / "syntax_error")
    with (syntax / "part1_inplace.py").open("a") as handle:
        handle.write("\ndef broken(:\n")
    missing = loose_files(subs / "missing_part2")
    # So is one holding an integer past Python's digit limit.
    (missing / "grader.toml").write_text("flavor = " + "9" * 5000 + "\n")
    (missing / "part2_out_of_place.py").unlink()
    zip_folder(reference_workspace(root / "zipped"), subs / "zipped.zip", wrap="my-workspace")
    (subs / "bad.zip").write_bytes(b"this is not a zip file")
    with zipfile.ZipFile(subs / "traversal.zip", "w") as archive:
        archive.writestr("part1_inplace.py", "x = 1\n")
        archive.writestr("../../escaped.py", "x = 1\n")
    config = root / "instructor.toml"
    config.write_text(CONFIG)
    csv_path = root / "grades.csv"

    with pytest.MonkeyPatch.context() as patch:
        lend_pool(patch, lambda: LentWorker(grading.worker))
        result = invoke(["grade", str(subs), "--jobs", "1", "--json", "--csv", str(csv_path),
                         "--no-sandbox", "--config", str(config), "--seed", "7"])

    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)
    rows = {Path(s["path"]).name: s for s in document["submissions"]}
    return {"document": document, "rows": rows, "csv": csv_path.read_text(), "root": root,
            "fork_line": fork_line}


def part(row: dict[str, Any], part_id: str) -> dict[str, Any]:
    return next(p for p in row["parts"] if p["id"] == part_id)


def test_json_shape_is_exactly_the_documented_one(graded: dict[str, Any]) -> None:
    document = graded["document"]
    validate_document(document, "grade")
    assert set(document) == {"schema_version", "round", "seed", "sandboxed", "submissions"}
    assert document["round"] == "prefix-products" and document["seed"] == 7
    for row in document["submissions"]:
        # The review scan read every submission that could be staged.
        scanned = {"flags"} if row["status"] != "broken" else set()
        assert set(row) == {"path", "status", "flavor", "score", "max_score", "notes",
                            "parts"} | scanned
        assert isinstance(row["path"], str) and row["flavor"] == "torch"
        assert row["status"] in ("graded", "mismatch", "broken", "error")
        assert isinstance(row["notes"], list)
        assert isinstance(row["score"], float) and isinstance(row["max_score"], float)
        assert [p["id"] for p in row["parts"]] == ["part1", "part2"]
        for p in row["parts"]:
            assert set(p) == {"id", "title", "score", "max_score", "checks"}
            assert {"id", "title", "status", "score", "max_score", "message", "hint",
                    "duration_s"} == set(p["checks"][0])


def test_every_submission_gets_one_row_in_order(graded: dict[str, Any]) -> None:
    names = [Path(s["path"]).name for s in graded["document"]["submissions"]]
    assert names == ["bad.zip", "correct", "missing_part2", "other_flavor", "syntax_error",
                     "traversal.zip", "wrong_order", "zipped.zip"]


def test_the_review_scan_flags_and_changes_no_score(graded: dict[str, Any]) -> None:
    rows = graded["rows"]
    assert rows["correct"]["flags"] == [{
        "file": "part2_out_of_place.py", "line": graded["fork_line"], "rule": "processes",
        "construct": "os.fork", "reason": "starts or signals processes"}]
    assert rows["correct"]["score"] == 100.0
    assert rows["syntax_error"]["flags"] == [{
        "file": "part1_inplace.py", "line": 38, "rule": "does-not-parse",
        "construct": "SyntaxError: invalid syntax",
        "reason": "is not valid Python, so it could not be scanned"}]
    for name in ("wrong_order", "missing_part2", "zipped.zip"):
        assert rows[name]["flags"] == [], name


def test_scores_follow_the_instructor_settings(graded: dict[str, Any]) -> None:
    rows = graded["rows"]
    for row in rows.values():
        assert row["max_score"] == 100.0
        assert part(row, "part1")["max_score"] == 60.0
    assert rows["correct"]["score"] == 100.0
    assert rows["zipped.zip"]["score"] == 100.0


def test_a_wrong_multiply_order_loses_points_on_that_part_only(graded: dict[str, Any]) -> None:
    row = graded["rows"]["wrong_order"]
    part1 = part(row, "part1")
    assert 0 < part1["score"] < 60
    correctness = next(c for c in part1["checks"] if c["id"] == "part1.correctness")
    assert correctness["status"] == "failed"
    assert part(row, "part2")["score"] == 40.0


def test_a_syntax_error_costs_its_part_and_says_where(graded: dict[str, Any]) -> None:
    row = graded["rows"]["syntax_error"]
    assert part(row, "part1")["score"] == 0.0
    assert part(row, "part2")["score"] == 40.0
    first = part(row, "part1")["checks"][0]
    assert first["status"] == "error"
    assert "SyntaxError" in first["message"] and "part1_inplace.py" in first["message"]


def test_a_missing_file_costs_its_part(graded: dict[str, Any]) -> None:
    row = graded["rows"]["missing_part2"]
    assert part(row, "part1")["score"] == 60.0
    assert part(row, "part2")["score"] == 0.0
    assert all(c["status"] == "error" for c in part(row, "part2")["checks"])


@pytest.mark.parametrize(("name", "reason"), [
    ("bad.zip", "not a readable zip file"),
    ("traversal.zip", "unsafe path in the zip: '../../escaped.py'"),
])
def test_broken_submissions_get_their_own_clear_row(graded: dict[str, Any], name: str,
                                                    reason: str) -> None:
    row = graded["rows"][name]
    assert row["score"] == 0.0 and row["max_score"] == 100.0
    checks = [c for p in row["parts"] for c in p["checks"]]
    assert checks and all(c["status"] == "error" and reason in c["message"] for c in checks)
    assert not (graded["root"] / "escaped.py").exists()


def test_csv_has_one_line_per_submission(graded: dict[str, Any]) -> None:
    lines = list(csv.DictReader(io.StringIO(graded["csv"])))
    by_name = {Path(line["path"]).name: line for line in lines}
    assert len(lines) == 8
    assert by_name["correct"]["score"] == "100.0" and by_name["correct"]["status"] == "graded"
    # Its grader.toml says numpy, the instructor's torch: not graded as the wrong flavor.
    other = by_name["other_flavor"]
    assert other["score"] == "0.0" and other["status"] == "mismatch"
    assert by_name["zipped.zip"]["status"] == "graded"
    assert by_name["bad.zip"]["status"] == "broken"
    assert "not a readable zip file" in by_name["bad.zip"]["notes"]
    assert by_name["missing_part2"]["notes"] == "missing part2_out_of_place.py"
    assert other["notes"] == (
        "not graded: its grader.toml says numpy, and the coach's settings pin torch (their "
        "`flavor` line; without it each submission is graded in its own flavor; or grade it "
        "alone with --flavor numpy)")
    assert by_name["syntax_error"]["part1"] == "0.0" and by_name["syntax_error"]["part2"] == "40.0"
    assert by_name["correct"]["flags"] == \
        f"part2_out_of_place.py:{graded['fork_line']} os.fork: starts or signals processes"
    assert by_name["zipped.zip"]["flags"] == by_name["bad.zip"]["flags"] == ""


def test_a_mistyped_submission_path_is_a_usage_error(tmp_path: Path) -> None:
    result = invoke(["grade", str(tmp_path / "does-not-exist")])
    assert result.exit_code == 2
    assert "does-not-exist' does not exist" in result.output


# --- runs that never reach a worker, and unit tests of staging ----------------------------

def test_table_lists_broken_rows_and_uses_the_config_found_from_here(tmp_path: Path,
                                                                      monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "grader.toml").write_text('parts = ["part3"]\n[points]\npart3 = 50\n')
    (tmp_path / "empty").mkdir()
    (tmp_path / "junk.zip").write_bytes(b"PK\x03\x04 truncated")

    result = invoke(["grade", "junk.zip", "empty"])

    assert result.exit_code == 0, result.output
    out = result.output
    assert f"settings from {tmp_path / 'grader.toml'}" in out
    assert "part3" in out and "/50" in out and "/20" not in out
    assert "junk.zip: not a readable zip file" in out
    assert "empty: no exercise files found" in out
    assert "2 submissions (prefix-products round, torch flavor" in out
    assert "2 that could not be graded" in out


def test_grader_failures_are_rows_too_and_exit_1(tmp_path: Path, monkeypatch) -> None:
    def failing_worker() -> Any:
        raise GraderCrash("the worker could not start")

    lend_pool(monkeypatch, failing_worker)
    monkeypatch.chdir(tmp_path)
    loose_files(tmp_path / "a")
    loose_files(tmp_path / "b")

    result = invoke(["grade", "a", "b", "--json"])

    assert result.exit_code == 1
    rows = json.loads(result.stdout)["submissions"]
    assert len(rows) == 2
    assert all("the worker could not start" in p["checks"][0]["message"]
               for row in rows for p in row["parts"])


def test_a_grader_failure_mid_way_keeps_the_parts_that_finished(tmp_path: Path,
                                                                monkeypatch) -> None:
    class DiesAfterOnePart(Worker):
        def run(self, request, on_check=None, on_part=None):  # type: ignore[no-untyped-def]
            def then_die(part: PartResult) -> None:
                on_part(part)  # type: ignore[misc]
                raise GraderCrash("the worker died")

            return super().run(request, on_check, then_die)

    lend_pool(monkeypatch, DiesAfterOnePart)
    root = write_exercises(tmp_path / "sub", PREFIX, "numpy", "references")
    config = batch.GradingConfig(Settings(PREFIX, "numpy", enabled=("part2", "part4")), seed=1,
                                 timeout_s=30.0)

    [row] = batch.grade_submissions([root], config, 1)

    assert row.status == "error" and "the worker died" in row.note
    assert row.parts[0].id == "part2" and row.parts[0].passed
    assert all(c.status == "error" for c in row.parts[1].checks)
    assert row.score == 15.0 and row.max_score == 45.0


@pytest.mark.parametrize("cut_short", ["undecided", "given up"])
def test_a_submission_whose_grading_was_cut_short_is_graded_again_alone_after_the_batch(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, grading,  # type: ignore[no-untyped-def]
        cut_short: str) -> None:
    """A classmate's load (or another program's) can leave checks undecided, or have the
    grader give a grading up (its worker died, its sandbox could not start: what a classmate
    filling the machine's table of open files once did, in words no rule of the sandbox's
    knew); such a submission is graded again once the rest of the batch is done, one at a
    time, and the row whose grading left less open (finished, then fewer undecided checks) is
    kept, saying so. A row with nothing left open is graded once."""
    from dataclasses import replace

    graded: dict[str, int] = {}
    cut = {"1": 1, "2": 2}  # the staged folders of the second and third submission

    class CutShort(LentWorker):
        """The session's worker, a submission's first `cut[name]` gradings cut short as the
        machine would cut them: every check of part 2 undecided, or the grading given up."""

        def __enter__(self) -> CutShort:  # type: ignore[override]
            return self

        def run(self, request, on_check=None, on_part=None):  # type: ignore[no-untyped-def]
            name = Path(request.root).name
            graded[name] = graded.get(name, 0) + 1
            if graded[name] <= cut.get(name, 0) and cut_short == "given up":
                raise GraderCrash("the sandbox did not start: libc.so.6: cannot open shared "
                                  "object file: Error 99")
            result = self.worker.run(request, on_check, on_part)
            if graded[name] > cut.get(name, 0):
                return result
            held = [replace(p, checks=[replace(c, status="undecided", score=0.0)
                                       for c in p.checks]) for p in result.parts]
            return replace(result, parts=held)

    lend_pool(monkeypatch, lambda: CutShort(grading.worker), jobs=1)  # one lent worker
    roots = [write_exercises(tmp_path / name, PREFIX, "numpy", "references")
             for name in ("honest", "cut_once", "cut_always")]
    config = batch.GradingConfig(Settings(PREFIX, "numpy", enabled=("part2",)), seed=1,
                                 timeout_s=30.0)

    honest, once, always = batch.grade_submissions(roots, config, 2)

    assert graded == {"0": 1, "1": 2, "2": 2}
    assert (honest.status, honest.score, once.status, once.score) == ("graded", 15.0,
                                                                      "graded", 15.0)
    assert batch.GRADED_AGAIN not in honest.notes and once.notes[-1] == batch.GRADED_AGAIN
    assert batch.undecided_in(once) == 0 and batch.GRADED_AGAIN not in always.notes
    assert always.score == 0.0 and batch.left_open(always) == (
        (True, 0) if cut_short == "given up" else (False, len(always.parts[0].checks)))
    assert ("Error 99" in always.note) == (cut_short == "given up")


NO_FILE_LEFT = """
import errno, sys
from pathlib import Path
from grader.coach import batch
from grader.coach.selfcheck import write_exercises
from grader.engine.rounds import get_round
from grader.engine.workspace import Settings
from grader.runner.pool import RequestDone


class NoFileLeft:
    def find_spec(self, name, path=None, target=None):
        raise OSError(errno.ENFILE, "Too many open files in system")


class Full:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        sys.meta_path.remove(FULL)

    def cuda(self):
        return False

    def grade(self, requests):
        if FULL not in sys.meta_path:
            sys.meta_path.insert(0, FULL)
        for request in requests:
            yield RequestDone(request.id, None, "the sandbox did not start: Error 23")


FULL = NoFileLeft()
PREFIX = get_round("prefix-products")
root = write_exercises(Path(sys.argv[1]), PREFIX, "numpy", "references")
config = batch.GradingConfig(Settings(PREFIX, "numpy"), seed=1, timeout_s=30.0)
assert "grader.checks.table" not in sys.modules
[row] = batch.grade_submissions([root], config, 1, graders=lambda count: Full())
print(row.status, len(row.parts), sum(len(p.checks) for p in row.parts))
"""


def test_a_machine_out_of_files_while_rows_are_made_costs_no_row(tmp_path: Path) -> None:
    """While a submission fills the machine's table of open files (a grader run as an ordinary
    user gets no file past it; root is spared), the batch goes on: making the row of a
    grading that was cut short opens no file (nothing it needs is imported then), where its
    first import of the checks' table once ended `grade` with no row for anyone."""
    done = run_owned([sys.executable, "-c", NO_FILE_LEFT, str(tmp_path / "sub")],
                     env=SESSION_ENV)
    from grader.checks.table import round_checks

    numpy_checks = sum("numpy" in c.flavors for c in round_checks(PREFIX))
    assert done.stdout.split() == ["error", "4", str(numpy_checks)], done.stdout + done.stderr


def test_bad_settings_stop_before_grading(tmp_path: Path) -> None:
    config = tmp_path / "bad.toml"
    config.write_text('parts = ["part9"]\n')
    result = invoke(["grade", str(tmp_path), "--config", str(config)])
    assert result.exit_code == 1
    assert f"Error: {config}: parts must be a non-empty list" in result.output


def test_gradescope_takes_exactly_one_submission(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    result = invoke(["grade", str(tmp_path / "a"), str(tmp_path / "b"), "--gradescope",
                     str(tmp_path / "r.json")])
    assert result.exit_code == 2
    assert "--gradescope grades exactly one SUBMISSION" in result.output


def test_a_folder_of_submissions_expands_but_a_submission_does_not(tmp_path: Path) -> None:
    loose_files(tmp_path / "class" / "ann")
    reference_workspace(tmp_path / "class" / "ben")
    (tmp_path / "class" / "cat.zip").write_bytes(b"")
    (tmp_path / "class" / "notes.txt").write_text("ignored")
    (tmp_path / "class" / ".hidden").mkdir()
    (tmp_path / "class" / ".git" / "objects").mkdir(parents=True)
    reference_workspace(tmp_path / "class" / ".dot")  # a candidate's name, not a tool's folder
    assert [p.name for p in expand(tmp_path / "class", PREFIX)] == [".dot", "ann", "ben",
                                                                     "cat.zip"]
    assert expand(tmp_path / "class" / "ben", PREFIX) == [tmp_path / "class" / "ben"]
    assert expand(tmp_path / "class" / "ann", PREFIX) == [tmp_path / "class" / "ann"]


def test_a_folder_of_two_submissions_or_more_is_a_batch_whatever_else_it_holds(
        tmp_path: Path) -> None:
    """One hand-in named exercises/, part files left loose, or the coach's grader.toml beside
    the class would make the folder look like one workspace and swallow everyone's rows: with
    two submissions in it or more, it is a batch, and each of those is a row of its own. A
    workspace with one copy of itself inside stays one submission."""
    reference_workspace(tmp_path / "class" / "ann")
    loose_files(tmp_path / "class" / "ben")
    loose_files(tmp_path / "class" / "exercises")
    (tmp_path / "class" / "part1_inplace.py").write_text("def prefix_products_out(W, P):\n")
    (tmp_path / "class" / "grader.toml").write_text('flavor = "torch"\n')
    assert [p.name for p in expand(tmp_path / "class", PREFIX)] == [
        "ann", "ben", "exercises", "part1_inplace.py"]
    reference_workspace(tmp_path / "ws")
    reference_workspace(tmp_path / "ws" / "old_attempt")
    assert expand(tmp_path / "ws", PREFIX) == [tmp_path / "ws"]


def P(text: str) -> Any:  # noqa: N802 - reads like the path it builds
    from pathlib import PurePosixPath

    return PurePosixPath(text)


def test_the_exercise_folder_is_the_shallowest_one() -> None:
    files = [P("ws/exercises/part1_inplace.py"), P("ws/reference/torch/part1_inplace.py"),
             P("ws/README.md")]
    assert find_exercise_folder(files, NAMES) == P("ws/exercises")
    assert find_exercise_folder([P("part2_out_of_place.py")], NAMES) == P(".")
    tie = [P("a/part1_inplace.py"), P("exercises/part1_inplace.py")]
    assert find_exercise_folder(tie, NAMES) == P("exercises")
    with pytest.raises(SubmissionError, match="several folders"):
        find_exercise_folder([P("a/part1_inplace.py"), P("b/part1_inplace.py")], NAMES)
    with pytest.raises(SubmissionError, match="found only: part1.py"):
        find_exercise_folder([P("part1.py")], NAMES)


def test_staging_copies_and_never_writes_into_the_submission(tmp_path: Path) -> None:
    source = reference_workspace(tmp_path / "ws")
    (source / "exercises" / "helpers").mkdir()
    (source / "exercises" / "helpers" / "util.py").write_text("X = 1\n")
    (source / "exercises" / "__pycache__").mkdir()
    (source / "exercises" / "__pycache__" / "junk.pyc").write_bytes(b"\0")
    before = sorted(p.relative_to(source) for p in source.rglob("*"))

    staged = stage(source, tmp_path / "stage", PREFIX)

    assert staged.problem is None and staged.missing == ()
    assert staged.root is not None
    copied = staged.root / "exercises"
    assert (copied / "helpers" / "util.py").read_text() == "X = 1\n"
    assert not (copied / "__pycache__").exists()
    assert sorted(p.relative_to(source) for p in source.rglob("*")) == before


def test_a_submission_folder_holding_one_zip_is_that_zip(tmp_path: Path) -> None:
    upload = tmp_path / "upload"
    upload.mkdir()
    zip_folder(loose_files(tmp_path / "files"), upload / "x.zip")
    staged = stage(upload, tmp_path / "stage", PREFIX)
    assert staged.problem is None and staged.source == str(tmp_path / "upload")


def test_zip_guards(tmp_path: Path) -> None:
    def make(name: str, entries: dict[str, bytes], mode: int | None = None) -> Path:
        target = tmp_path / name
        with zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as archive:
            for entry, data in entries.items():
                info = zipfile.ZipInfo(entry)
                if mode is not None:
                    info.external_attr = mode << 16
                archive.writestr(info, data)
        return target

    cases = {
        "absolute": (make("abs.zip", {"/etc/part1_inplace.py": b"x"}), "unsafe path"),
        "drive": (make("drive.zip", {"C:\\part1_inplace.py": b"x"}), "unsafe path"),
        "link": (make("link.zip", {"part1_inplace.py": b"/etc/passwd"}, 0o120777),
                 "symbolic link"),
        "huge": (make("huge.zip", {"part1_inplace.py": b"0" * (MAX_FILE_BYTES + 1)}),
                 "larger than 1 MiB"),
        "many": (make("many.zip", {"part1_inplace.py": b"x",
                                   **{f"f{i}.py": b"" for i in range(300)}}),
                 "too much to grade"),
        "empty": (make("empty.zip", {"README.md": b"hi"}), "no exercise files found"),
    }
    for name, (path, reason) in cases.items():
        staged = stage(path, tmp_path / f"stage-{name}", PREFIX)
        assert staged.root is None, name
        assert reason in (staged.problem or ""), (name, staged.problem)


@pytest.mark.parametrize(("entries", "directory", "zip64", "refused"), [
    (MAX_ZIP_MEMBERS + 1, None, False, "entries; at most"),
    (3, MAX_DIRECTORY_BYTES + 1, False, "table of entries takes"),
    (2_000_000, None, True, "entries; at most"),
])
def test_a_zip_whose_table_of_entries_is_too_long_is_refused_before_it_is_read(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, entries: int, directory: int | None,
        zip64: bool, refused: str) -> None:
    """A zip's end record says how many entries its central directory holds and how long it
    is; zipfile reads and parses all of it before anything could count (two million entries:
    17.8 s and 1 GB). Too many entries, or too long a table, is refused from the end record
    alone (the classic one, or the zip64 one it points to), nothing parsed."""
    import struct

    from grader.coach import submissions

    path = tmp_path / "listed.zip"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("part1_inplace.py", b"x = 1\n")
    data = bytearray(path.read_bytes())
    end = data.rfind(b"PK\x05\x06")
    if zip64:
        record = struct.pack("<4sQ2H2L4Q", b"PK\x06\x06", 44, 45, 45, 0, 0, entries, entries,
                             100, 0)
        locator = struct.pack("<4sLQL", b"PK\x06\x07", 0, end, 1)
        struct.pack_into("<HH", data, end + 8, 0xFFFF, 0xFFFF)
        data[end:end] = record + locator
    else:
        struct.pack_into("<HH", data, end + 8, entries, entries)
        if directory is not None:
            struct.pack_into("<L", data, end + 12, directory)
    path.write_bytes(bytes(data))
    monkeypatch.setattr(submissions.zipfile, "ZipFile",
                        lambda *args, **kwargs: pytest.fail("the table was read"))
    staged = stage(path, tmp_path / "staged", PREFIX)
    assert staged.root is None and refused in (staged.problem or ""), staged.problem


def test_a_zip_outside_the_exercise_folder_is_not_extracted(tmp_path: Path) -> None:
    target = tmp_path / "big.zip"
    with zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("ws/exercises/part1_inplace.py", "x = 1\n")
        archive.writestr("ws/grader.toml", 'flavor = "numpy"\n')
        archive.writestr("ws/data/weights.bin", b"0" * (4 * MAX_FILE_BYTES))
    staged = stage(target, tmp_path / "stage", PREFIX)
    assert staged.problem is None and staged.root is not None
    assert staged.declared_flavor == "numpy"
    assert sorted(p.name for p in (staged.root / "exercises").iterdir()) == [
        "__init__.py", "part1_inplace.py"]
    assert "missing part2_out_of_place.py, part3_backward.py, part4_scan.py" in staged.notes


def test_a_row_that_never_ran_is_scored_by_the_same_rule_as_a_graded_one(grading,
                                                                         tmp_path: Path) -> None:
    """One scoring rule: the stand-in checks of a part that never ran carry exactly the points
    its graded checks carry on this machine (GPU timing included, worth nothing without CUDA)."""
    settings = Settings(PREFIX, "torch")
    config = batch.GradingConfig(settings, seed=1, timeout_s=30.0, cuda=grading.worker.cuda)
    root = write_exercises(tmp_path / "sub", PREFIX, "torch", "references")
    graded = grading.run(root, "torch", ["part4"], informational=False).parts[0]
    (unrun,) = [p for p in batch.unrun_parts(config, settings, "the zip was unreadable")
                if p.id == "part4"]
    assert [(c.id, round(c.max_score, 6)) for c in unrun.checks] == \
        [(c.id, round(c.max_score, 6)) for c in graded.checks]
    assert unrun.max_score == pytest.approx(30.0) == graded.max_score


# --- links and names a candidate chose ------------------------------------------------------

def test_links_are_refused_or_left_out_and_names_stay_text(tmp_path: Path,
                                                           monkeypatch) -> None:
    """A class folder with a link to a classmate, a dangling link and a loop beside real
    entries; file names a spreadsheet would run. None of it needs a worker: only rows that
    could not be staged."""
    class_dir = tmp_path / "class"
    (class_dir / "ann").mkdir(parents=True)
    (class_dir / "ann" / "notes.txt").write_text("no exercise files here\n")
    (class_dir / "copy-of-ann").symlink_to("ann")
    (class_dir / "ghost").symlink_to(tmp_path / "nowhere")
    (class_dir / "loop").symlink_to("loop")
    (class_dir / "ben" / "exercises").mkdir(parents=True)
    (class_dir / "ben" / "exercises" / "part1_inplace.py").symlink_to(
        class_dir / "ann" / "notes.txt")
    for name in ("=HYPERLINK(\"evil\").zip", "-1.5.zip", "\x1b]0;owned\x07.zip"):
        (class_dir / name).write_bytes(b"not a zip")
    monkeypatch.chdir(class_dir)

    table = invoke(["grade", "."])
    as_json = invoke(["grade", ".", "--json", "--csv", "grades.csv"])

    assert table.exit_code == as_json.exit_code == 0, table.output
    rows = {row["path"]: row for row in json.loads(as_json.stdout)["submissions"]}
    link = "links are never followed, so it was not graded"
    assert [(path, row["status"], row["notes"]) for path, row in rows.items()] == [
        ("\\u001b]0;owned\\u0007.zip", "broken",
         ["not a readable zip file (File is not a zip file)"]),
        ("-1.5.zip", "broken", ["not a readable zip file (File is not a zip file)"]),
        ("=HYPERLINK(\"evil\").zip", "broken",
         ["not a readable zip file (File is not a zip file)"]),
        ("ann", "broken", ["no exercise files found (expected part1_inplace.py, "
                           "part2_out_of_place.py, part3_backward.py, part4_scan.py, or a "
                           "workspace with exercises/)"]),
        ("ben", "broken", ["no exercise files found (expected part1_inplace.py, "
                           "part2_out_of_place.py, part3_backward.py, part4_scan.py, or a "
                           "workspace with exercises/); links (symbolic or hard) and special "
                           "files are not read, so these were left out: "
                           "exercises/part1_inplace.py"]),
        ("copy-of-ann", "broken", [f"a symbolic link (to ann): {link}"]),
        ("ghost", "broken", [f"a symbolic link (to {tmp_path / 'nowhere'}): {link}"]),
        ("loop", "broken", [f"a symbolic link (to loop): {link}"]),
    ]
    assert "\x1b" not in table.output and "\x07" not in table.output
    assert "  1 \\u001b]0;owned\\u0007.zip: not a readable zip file" in table.output
    assert "  6 copy-of-ann: a symbolic link (to ann)" in table.output
    cells = [line[:2] for line in csv.reader(io.StringIO((class_dir / "grades.csv").read_text()))]
    assert cells[1:4] == [["\\u001b]0;owned\\u0007.zip", "broken"], ["'-1.5.zip", "broken"],
                          ["'=HYPERLINK(\"evil\").zip", "broken"]]


def test_special_files_and_hard_links_are_never_opened_and_the_batch_goes_on(
        tmp_path: Path, monkeypatch) -> None:
    """A FIFO named like a zip (opening it would wait forever), a FIFO and a hard link to the
    coach's config inside a submission (what a student's tarball unpacked beside it can
    make): each is a row or a note, never read, and the batch finishes."""
    class_dir = tmp_path / "class"
    class_dir.mkdir()
    secret = tmp_path / "coach.toml"
    secret.write_text('secret = "COACH-SECRET"\n')
    os.mkfifo(class_dir / "evil.zip")
    ann = class_dir / "ann"
    ann.mkdir()
    os.mkfifo(ann / "part1_inplace.py")
    os.link(secret, ann / "notes.txt")
    os.link(secret, class_dir / "stolen.zip")
    monkeypatch.chdir(class_dir)

    done = invoke(["grade", ".", "--json"])

    assert done.exit_code == 0, done.output
    rows = {row["path"]: row for row in json.loads(done.stdout)["submissions"]}
    assert rows["evil.zip"]["notes"] == [
        "not a regular file (a FIFO, socket or device): never opened"]
    assert rows["stolen.zip"]["notes"] == [
        "a file with other names elsewhere on the disk (a hard link): not read"]
    assert rows["ann"]["status"] == "broken" and rows["ann"]["notes"][0].endswith(
        "links (symbolic or hard) and special files are not read, so these were left out: "
        "notes.txt, part1_inplace.py")
    assert "COACH-SECRET" not in done.output


def test_a_file_linked_between_classmates_costs_neither_their_row(tmp_path: Path) -> None:
    """A classmate's archive that hard-links its part to someone's file (all of the file's
    names inside the batch's submissions) would make that someone's file one "with other
    names" too: both are read, and each row names the other, so that a coach compares the
    two; a file with a name outside the submissions (the coach's config beside the class) is
    still never read."""
    class_dir = tmp_path / "class"
    ann = loose_files(class_dir / "ann")
    mallory = class_dir / "mallory"
    mallory.mkdir()
    os.link(ann / "part1_inplace.py", mallory / "part1_inplace.py")
    (class_dir / "grader.toml").write_text('secret = "COACH-SECRET"\n')
    eve = class_dir / "eve"
    eve.mkdir()
    os.link(class_dir / "grader.toml", eve / "part1_inplace.py")
    paths = expand(class_dir, PREFIX)
    shared = SharedFiles.among(paths)
    staged = {p.name: stage(p, tmp_path / "stage" / p.name, PREFIX, shared) for p in paths}

    for name, other in (("ann", "mallory"), ("mallory", "ann")):
        assert staged[name].problem is None
        assert (staged[name].root / "exercises" / "part1_inplace.py").read_bytes() == \
            (ann / "part1_inplace.py").read_bytes()
        assert f"part1_inplace.py is the same file as one in {class_dir / other} (a hard " \
            "link): read both" in staged[name].notes
    assert staged["eve"].root is None and "part1_inplace.py" in str(staged["eve"].problem)


def test_a_link_inside_a_submission_is_left_out_and_said(tmp_path: Path) -> None:
    """A linked exercise file pointing at a classmate's file is not copied (its part goes
    missing, and the note says why); a linked folder and a loop are not followed."""
    ann = loose_files(tmp_path / "ann")
    ben = loose_files(tmp_path / "ben")
    (ben / "part1_inplace.py").unlink()
    (ben / "part1_inplace.py").symlink_to(ann / "part1_inplace.py")
    (ben / "shared").symlink_to(ann)
    (ben / "loop").symlink_to("loop")

    staged = stage(ben, tmp_path / "stage", PREFIX)

    assert staged.problem is None and staged.root is not None
    assert staged.missing == ("part1_inplace.py",)
    assert staged.notes == ("missing part1_inplace.py",
                            "links (symbolic or hard) and special files are not read, so "
                            "these were left out: loop, part1_inplace.py, shared")
    copied = sorted(p.name for p in (staged.root / "exercises").iterdir())
    assert copied == ["__init__.py", "part2_out_of_place.py", "part3_backward.py",
                      "part4_scan.py"]
    assert not any(p.is_symlink() for p in staged.root.rglob("*"))


@pytest.mark.parametrize(("enabled", "declared", "max_score", "absent"), [
    (None, "numpy", 100.0, ["part3"]),        # numpy's matmul-grad has no Part 3
    (None, "torch", 100.0, []),
    (("part3",), "numpy", 35.0, ["part3"]),   # all a numpy row could hand in is not there
])
def test_where_each_submission_picks_its_flavor_every_row_is_out_of_the_same_total(
        enabled: tuple[str, ...] | None, declared: str, max_score: float,
        absent: list[str]) -> None:
    """An instructor's config that names no flavor lets each submission's grader.toml pick
    one; a flavor with fewer parts is no way to fewer points to earn: the parts it lacks count
    as not handed in, and every row's total is the instructor's."""
    round_ = get_round("matmul-grad")
    config = batch.GradingConfig(Settings(round_, round_.flavors[0], enabled=enabled,
                                          flavor_given=False), seed=1, timeout_s=30.0)
    row = batch.broken_row("class/someone", config, "could not be staged", flavor=declared)
    assert row.max_score == max_score and row.score == 0.0
    assert [p.id for p in row.parts if p.checks[0].id.endswith(".flavor")] == absent
    for part_id in absent:
        [stand_in] = row.part(part_id).checks  # type: ignore[union-attr]
        assert stand_in.message == f"{part_id} has no numpy flavor: it counts as not handed in"


@pytest.mark.parametrize("declared", ["numpy", "matmul-grad"])
def test_a_config_made_by_init_pins_its_flavor_and_says_so(tmp_path: Path, declared: str) -> None:
    """A coach's grader.toml written by `grader init` names a flavor: the table says every
    submission is graded in it, and a numpy workspace (or one that says it is for another
    round) is not graded as a wrong torch submission but refused, saying why."""
    coach = tmp_path / "coach"
    assert run_grader("init", "--flavor", "torch", coach, cwd=tmp_path).returncode == 0
    assert "# a coach's copy grades every submission in it" in \
        (coach / "grader.toml").read_text()
    flavor = "numpy" if declared == "numpy" else "torch"
    ann = tmp_path / "subs" / "ann"
    made = run_grader("init", "--flavor", flavor, ann, cwd=tmp_path)
    assert made.returncode == 0, made.stderr
    for part in PREFIX.parts_for(flavor):
        shutil.copy(PREFIX.reference_file(part, flavor), ann / "exercises" / part.file)
    if declared == "matmul-grad":
        (ann / "grader.toml").write_text('round = "matmul-grad"\n')

    done = run_grader("grade", ann.parent, "--config", coach / "grader.toml", "--json",
                      "--no-sandbox", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    (row,) = json.loads(done.stdout)["submissions"]
    assert (row["status"], row["score"], row["max_score"]) == ("mismatch", 0.0, 100.0)
    why = ("its grader.toml says numpy, and the coach's settings pin torch"
           if declared == "numpy" else
           "its grader.toml is for round matmul-grad, and this batch grades prefix-products")
    (note,) = row["notes"]
    assert note.startswith(f"not graded: {why}")
    assert all(c["status"] == "error" for p in row["parts"] for c in p["checks"])

    table = run_grader("grade", ann.parent, "--config", coach / "grader.toml",
                       "--no-sandbox", cwd=tmp_path, env={"COLUMNS": "200"}).stdout
    assert table.startswith(f"settings from {coach / 'grader.toml'}; every submission in torch "
                            "(the settings pin it)\n")
    assert f"not graded: {why}" in table
