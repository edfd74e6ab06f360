"""Gradescope's results.json: the fields, partial results, and run_autograder on its layout."""

from __future__ import annotations

import json
import sys
import zipfile
from pathlib import Path
from typing import Any

import pytest

from grader.coach.batch import BatchListener, Fanout, GradedRow, GradingConfig, grade_submissions
from grader.coach.gradescope import GradescopeWriter
from grader.coach.selfcheck import write_exercises
from grader.engine.results import CheckResult, PartResult
from grader.engine.workspace import Settings

from helpers import NO_SANDBOX, PREFIX, SESSION_ENV, LentWorker, lend_pool, needs_sandbox, run_owned

REPO = Path(__file__).resolve().parents[1]
GRADESCOPE_DIR = REPO / "docs" / "gradescope"
VISIBILITIES = {"hidden", "after_due_date", "after_published", "visible"}


def assert_valid_results(doc: dict[str, Any]) -> None:
    """The fields Gradescope reads, with the types and values it accepts."""
    assert isinstance(doc["score"], int | float)
    assert isinstance(doc["execution_time"], int | float) and doc["execution_time"] >= 0
    assert isinstance(doc["output"], str) and doc["output"]
    assert doc.get("visibility", "visible") in VISIBILITIES
    assert doc.get("stdout_visibility", "visible") in VISIBILITIES
    assert isinstance(doc["tests"], list)
    numbers = set()
    for test in doc["tests"]:
        assert {"name", "number", "score", "max_score", "status", "output",
                "visibility"} <= set(test)
        assert isinstance(test["name"], str) and test["name"]
        assert test["status"] in ("passed", "failed")
        assert 0 <= test["score"] <= test["max_score"] + 1e-9
        assert (test["status"] == "passed") == (test["score"] >= test["max_score"] - 1e-9)
        assert test["visibility"] in VISIBILITIES
        assert isinstance(test["output"], str)
        numbers.add(test["number"])
    assert len(numbers) == len(doc["tests"])
    # Each test's score is rounded to 4 decimals, so their sum may differ in the 4th.
    assert doc["score"] == pytest.approx(sum(t["score"] for t in doc["tests"]), abs=1e-3)


def check(status: str, score: float, max_score: float = 2.0) -> CheckResult:
    return CheckResult(id=f"part1.{status}", title=f"a {status} check", status=status,  # type: ignore[arg-type]
                       score=score, max_score=max_score, message=f"it {status}",
                       hint="look again" if status != "passed" else None, output="printed\n")


def test_partial_results_are_written_as_each_part_finishes(tmp_path: Path) -> None:
    path = tmp_path / "results" / "results.json"
    ticks = iter(range(100))
    writer = GradescopeWriter(path, "after_due_date", {"seed": 1}, ["part1_inplace.py"],
                              clock=lambda: next(ticks))

    writer.started(["sub"])
    first = json.loads(path.read_text())
    assert_valid_results(first)
    assert first["tests"] == [] and first["extra_data"]["complete"] is False
    assert "no part has finished" in first["output"]

    part1 = PartResult("part1", "In-place forward", [check("passed", 2.0), check("skipped", 0)])
    writer.part_done(0, part1)
    partial = json.loads(path.read_text())
    assert_valid_results(partial)
    assert [t["number"] for t in partial["tests"]] == ["1.1", "1.2"]
    assert partial["score"] == 2.0 and partial["extra_data"]["complete"] is False
    assert "graded so far: part1" in partial["output"]
    skipped = partial["tests"][1]
    assert skipped["status"] == "failed"  # a skip never reads as a pass
    assert skipped["output"].startswith("[skipped] it skipped")
    assert "hint: look again" in skipped["output"] and "printed" in skipped["output"]
    assert skipped["visibility"] == "after_due_date"

    part2 = PartResult("part2", "Out-of-place forward", [check("failed", 0.5)])
    writer.finished(0, GradedRow("sub", "graded", [part1, part2], 4.0, "numpy", ["a note"]))
    final = json.loads(path.read_text())
    assert_valid_results(final)
    assert final["score"] == 2.5 and final["extra_data"] == {"seed": 1, "complete": True}
    assert final["output"].startswith("Score 2.5/4.0") and "Notes: a note" in final["output"]
    assert final["execution_time"] == 3


def test_a_real_grading_writes_the_file_during_the_run(grading, tmp_path: Path,  # type: ignore[no-untyped-def]
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    lend_pool(monkeypatch, lambda: LentWorker(grading.worker))
    submission = write_exercises(tmp_path / "sub", PREFIX, "numpy", "references")
    path = tmp_path / "results.json"
    snapshots: list[dict[str, Any]] = []

    class Snapshot(BatchListener):
        def part_done(self, index: int, part: PartResult) -> None:
            snapshots.append(json.loads(path.read_text()))

    config = GradingConfig(Settings(PREFIX, "numpy", enabled=("part2", "part4")), seed=3,
                           timeout_s=30.0, sandbox=False)
    writer = GradescopeWriter(path, "visible", {}, [p.file for p in PREFIX.parts])
    [row] = grade_submissions([submission], config, 1, Fanout(writer, Snapshot()),
                              expand_folders=False)

    assert [len({t["number"][0] for t in s["tests"]}) for s in snapshots] == [1, 2]
    assert all(s["extra_data"]["complete"] is False for s in snapshots)
    final = json.loads(path.read_text())
    assert_valid_results(final)
    assert final["extra_data"]["complete"] is True
    assert final["score"] == row.score == 45.0


def gradescope_layout(tmp_path: Path) -> dict[str, str]:
    """Gradescope's folders under a temporary root, and the environment pointing at them."""
    root = tmp_path / "autograder"
    for name in ("submission", "source", "results"):
        (root / name).mkdir(parents=True)
    (root / "source" / "grader.toml").write_text(
        'flavor = "torch"\nparts = ["part2"]\ntimeout = 30\n'
        '[gradescope]\nvisibility = "after_published"\n')
    return {**SESSION_ENV, "GRADER_AUTOGRADER_ROOT": str(root), "GRADER_PYTHON": sys.executable}


def run_autograder(env: dict[str, str], cwd: Path) -> dict[str, Any]:
    done = run_owned(["bash", str(GRADESCOPE_DIR / "run_autograder")], env=env, cwd=cwd)
    assert done.returncode == 0, done.stderr
    results = Path(env["GRADER_AUTOGRADER_ROOT"]) / "results" / "results.json"
    return json.loads(results.read_text())


def graded_like_gradescope(tmp: pytest.TempPathFactory) -> tuple[dict[str, Any], Path]:
    """A torch submission of loose files, as Gradescope lays it out, graded by run_autograder
    in the sandbox (run once per test process): results.json and the submission folder."""
    env = gradescope_layout(tmp.mktemp("gradescope"))
    submission = Path(env["GRADER_AUTOGRADER_ROOT"]) / "submission"
    # Students upload loose files; Gradescope puts them straight into submission/.
    made = write_exercises(tmp.mktemp("made"), PREFIX, "torch", "references")
    for path in (made / "exercises").glob("part*.py"):
        path.rename(submission / path.name)
    return run_autograder(env, cwd=Path(env["GRADER_AUTOGRADER_ROOT"])), submission


JOBS = () if NO_SANDBOX else (graded_like_gradescope,)


@needs_sandbox
def test_run_autograder_grades_a_submission_laid_out_like_gradescope(grading) -> None:  # type: ignore[no-untyped-def]
    doc, submission = grading.once(graded_like_gradescope)
    assert_valid_results(doc)
    assert doc["score"] == 15.0
    assert doc["visibility"] == "after_published"
    assert len(doc["tests"]) == 7 and {t["status"] for t in doc["tests"]} == {"passed"}
    assert all(t["visibility"] == "after_published" for t in doc["tests"])
    assert doc["extra_data"]["complete"] is True
    assert not list(submission.rglob("__pycache__"))


def test_run_autograder_explains_an_empty_submission(tmp_path: Path) -> None:
    env = gradescope_layout(tmp_path)
    doc = run_autograder(env, cwd=tmp_path)
    assert_valid_results(doc)
    assert doc["score"] == 0.0 and doc["tests"]
    assert doc["output"].startswith("This submission could not be graded: no exercise files")


def test_run_autograder_leaves_a_file_when_the_grader_cannot_start(tmp_path: Path) -> None:
    env = {**gradescope_layout(tmp_path), "GRADER_PYTHON": "/bin/false"}
    doc = run_autograder(env, cwd=tmp_path)
    assert doc["score"] == 0.0 and doc["tests"] == []
    assert doc["output"].startswith("The autograder did not finish (exit status 1)")


def test_run_autograder_discards_a_results_file_when_the_grader_was_killed(
        tmp_path: Path) -> None:
    """Whoever wrote results.json, a grader that did not finish leaves no score behind: here a
    stand-in for the grader writes full marks and is killed."""
    forger = tmp_path / "forger.sh"
    forger.write_text('#!/bin/sh\nresults="$GRADER_AUTOGRADER_ROOT/results/results.json"\n'
                      'echo \'{"score": 100.0, "tests": []}\' > "$results"\nkill -9 $$\n')
    forger.chmod(0o755)
    env = {**gradescope_layout(tmp_path), "GRADER_PYTHON": str(forger)}
    doc = run_autograder(env, cwd=tmp_path)
    assert doc["score"] == 0.0
    assert doc["output"].startswith("The autograder did not finish (exit status 137)")


def test_make_zip_puts_the_scripts_at_the_root(tmp_path: Path) -> None:
    out = tmp_path / "autograder.zip"
    run_owned(["bash", str(GRADESCOPE_DIR / "make_zip.sh"), str(REPO / "grader.toml"),
               str(out)], check=True, timeout=60)
    with zipfile.ZipFile(out) as archive:
        names = set(archive.namelist())
        modes = {i.filename: i.external_attr >> 16 for i in archive.infolist()}
    assert {"setup.sh", "run_autograder", "grader.toml", "grader-src/pyproject.toml",
            "grader-src/grader/cli.py",
            "grader-src/reference/prefix-products/torch/part1_inplace.py",
            "grader-src/grader/rounds/prefix-products/stubs/torch/part1_inplace.py"} <= names
    assert modes["run_autograder"] & 0o111 and modes["setup.sh"] & 0o111
    assert not any("__pycache__" in name for name in names)
