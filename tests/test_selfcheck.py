"""`grader selfcheck`: stubs fail every check, references pass every check."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from grader import cli, selfcheck
from grader.results import CheckResult, PartResult, RunResult
from grader.workspace import pristine_files


def invoke(args: list[str]) -> Result:
    return CliRunner().invoke(cli.cli, args, env={"COLUMNS": "200"})


def run_of(*statuses: str, score: float = 0.0) -> RunResult:
    checks = [CheckResult(id=f"part1.c{i}", title="t", status=s, score=score,  # type: ignore[arg-type]
                          max_score=1.0, message=f"{s} here\nmore")
              for i, s in enumerate(statuses)]
    return RunResult("torch", 0, [PartResult("part1", "In-place forward", checks)])


def test_a_stub_that_passes_or_earns_points_is_a_violation() -> None:
    assert selfcheck.violations("torch", "stubs", run_of("failed", "error", "skipped")) == []
    found = selfcheck.violations("torch", "stubs", run_of("passed", "failed"))
    assert [(v.check_id, v.status, v.message) for v in found] == [
        ("part1.c0", "passed", "passed here")]
    partial = selfcheck.violations("torch", "stubs", run_of("failed", score=0.5))
    assert [v.check_id for v in partial] == ["part1.c0"]


def test_a_reference_must_pass_and_a_skip_proves_nothing() -> None:
    assert selfcheck.violations("numpy", "references", run_of("passed", score=1.0)) == []
    found = selfcheck.violations("numpy", "references", run_of("passed", "skipped", "failed"))
    assert [v.status for v in found] == ["skipped", "failed"]


def test_a_part_without_checks_is_a_violation() -> None:
    empty = RunResult("torch", 0, [PartResult("part2", "Out-of-place forward", [])])
    [found] = selfcheck.violations("torch", "references", empty)
    assert found.check_id == "part2" and "no checks" in found.message


def test_write_exercises_lays_out_stubs_and_references(tmp_path: Path) -> None:
    stubs = selfcheck.write_exercises(tmp_path / "s", "numpy", "stubs") / "exercises"
    refs = selfcheck.write_exercises(tmp_path / "r", "numpy", "references") / "exercises"
    pristine = pristine_files("numpy")
    assert {p.name: p.read_text() for p in stubs.iterdir()} == pristine
    assert (refs / "__init__.py").read_text() == pristine["__init__.py"]
    assert (refs / "part1_inplace.py").read_text() != pristine["part1_inplace.py"]


def test_selfcheck_passes_on_the_shipped_exercises() -> None:
    result = invoke(["selfcheck", "--flavor", "numpy", "--seed", "5", "--jobs", "2"])
    assert result.exit_code == 0, result.output
    assert "numpy" in result.output and "torch" not in result.output
    assert "selfcheck passed" in result.output


def test_selfcheck_lists_every_violation_and_fails(monkeypatch: pytest.MonkeyPatch,
                                                  tmp_path: Path) -> None:
    # A "reference" part1 that is really the stub, and a "stub" part4 that is the reference:
    # both directions of the rule must be caught, named check by check.
    real_reference = selfcheck.reference_file
    stub_part1 = tmp_path / "stub_part1.py"
    stub_part1.write_text(pristine_files("numpy")["part1_inplace.py"])
    monkeypatch.setattr(selfcheck, "reference_file", lambda part, flavor: stub_part1
                        if part.id == "part1" else real_reference(part, flavor))
    real_pristine = selfcheck.pristine_files
    monkeypatch.setattr(selfcheck, "pristine_files", lambda flavor: {
        **real_pristine(flavor),
        "part4_scan.py": real_reference(selfcheck.PARTS[3], flavor).read_text()})

    result = invoke(["selfcheck", "--flavor", "numpy", "--seed", "5"])

    assert result.exit_code == 1
    assert "selfcheck FAILED" in result.output
    assert "numpy references: part1.correctness should pass but is ✗ failed" in result.output
    assert "numpy stubs: part4.forward should fail but is ✓ passed" in result.output
