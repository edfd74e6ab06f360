"""`grader selfcheck`: every round's data is whole, its stubs fail every check and its
references pass every check, in every flavor."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from grader import cli
from grader.coach import selfcheck
from grader.engine.results import CheckResult, PartResult, RunResult
from grader.engine.rounds import EXTRA_ROUNDS_ENV, Round
from grader.engine.workspace import pristine_files

from helpers import PREFIX, REPO, LentWorker, lend_pool, run_grader


def invoke(args: list[str]) -> Result:
    return CliRunner().invoke(cli.cli, args, env={"COLUMNS": "200"})


def run_of(*statuses: str, score: float = 0.0) -> RunResult:
    checks = [CheckResult(id=f"part1.c{i}", title="t", status=s, score=score,  # type: ignore[arg-type]
                          max_score=1.0, message=f"{s} here\nmore")
              for i, s in enumerate(statuses)]
    return RunResult("prefix-products", "torch", 0,
                     [PartResult("part1", "In-place forward", checks)])


def test_a_stub_that_passes_or_earns_points_is_a_violation() -> None:
    assert selfcheck.violations(PREFIX, "torch", "stubs",
                                run_of("failed", "error", "skipped")) == []
    found = selfcheck.violations(PREFIX, "torch", "stubs", run_of("passed", "failed"))
    assert [(v.check_id, v.status, v.message) for v in found] == [
        ("part1.c0", "passed", "passed here")]
    partial = selfcheck.violations(PREFIX, "torch", "stubs", run_of("failed", score=0.5))
    assert [v.check_id for v in partial] == ["part1.c0"]


def test_a_reference_must_pass_and_a_skip_proves_nothing() -> None:
    assert selfcheck.violations(PREFIX, "numpy", "references", run_of("passed", score=1.0)) == []
    found = selfcheck.violations(PREFIX, "numpy", "references",
                                 run_of("passed", "skipped", "failed"))
    assert [v.status for v in found] == ["skipped", "failed"]


def test_write_exercises_lays_out_stubs_and_references(tmp_path: Path) -> None:
    stubs = selfcheck.write_exercises(tmp_path / "s", PREFIX, "numpy", "stubs") / "exercises"
    refs = selfcheck.write_exercises(tmp_path / "r", PREFIX, "numpy", "references") / "exercises"
    pristine = pristine_files(PREFIX, "numpy")
    assert {p.name: p.read_text() for p in stubs.iterdir()} == pristine
    assert (refs / "__init__.py").read_text() == pristine["__init__.py"]
    assert (refs / "part1_inplace.py").read_text() != pristine["part1_inplace.py"]


def test_the_shipped_rounds_data_is_whole() -> None:
    from grader.engine.rounds import installed

    for round_ in installed().values():
        assert selfcheck.data_violations(round_) == [], round_.id


def broken_copy(folder: Path) -> Path:
    """prefix-products copied as a coach's round of its own, with its references beside it:
    in the torch flavor, Part 1's "reference" is really the stub and Part 4's "stub" is the
    reference (the numpy references, which the judge's truth is computed from, stay sound)."""
    root = folder / "broken-prefix"
    shutil.copytree(PREFIX.folder, root, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(REPO / "reference" / PREFIX.id, root / "reference")
    stubs, refs = root / "stubs" / "torch", root / "reference" / "torch"
    shutil.copy(stubs / "part1_inplace.py", refs / "part1_inplace.py")
    shutil.copy(PREFIX.reference_file(PREFIX.part("part4"), "torch"), stubs / "part4_scan.py")
    config = root / "round.toml"
    config.write_text(config.read_text().replace('id = "prefix-products"', 'id = "broken-prefix"'))
    return root


def selfcheck_of_a_broken_round(tmp: pytest.TempPathFactory
                                ) -> subprocess.CompletedProcess[str]:
    """`grader selfcheck` of broken-prefix, a round outside the package (run ahead)."""
    rounds = tmp.mktemp("coach-rounds")
    return run_grader("selfcheck", "--round", "broken-prefix", "--flavor", "torch", "--seed",
                      "5", "--jobs", "1", cwd=rounds,
                      env={EXTRA_ROUNDS_ENV: str(broken_copy(rounds)), "COLUMNS": "200"})


JOBS = (selfcheck_of_a_broken_round,)


def test_selfcheck_lists_every_violation_and_fails(grading) -> None:  # type: ignore[no-untyped-def]
    """Both directions of the rule are caught, check by check, in a round that lives outside
    the package (a coach's own)."""
    result = grading.once(selfcheck_of_a_broken_round)
    output = result.stdout + result.stderr
    assert result.returncode == 1, output
    assert "selfcheck FAILED" in output
    assert "broken-prefix torch references: part1.correctness should pass but is ✗ failed" \
        in output
    assert "broken-prefix torch stubs: part4.forward should fail but is ✓ passed" in output
    assert "prefix-products" not in output  # only the round asked for was checked


def test_a_round_with_missing_data_is_reported_before_grading(tmp_path: Path) -> None:
    root = broken_copy(tmp_path)
    (root / "stubs" / "numpy" / "part3_backward.py").unlink()  # type: ignore[union-attr]
    (root / "followups" / "part4.md").write_text("---\nprobe: followup_part4\ntopics: nope\n---\n"
                                                 "## question\nq\n")
    found = {(v.flavor, v.check_id, v.message) for v in
             selfcheck.data_violations(Round.load(root))}
    assert ("numpy", "part3", "no stub part3_backward.py") in found
    assert any("unknown topic 'nope'" in message for _, _, message in found)


def test_selfcheck_passes_on_the_shipped_exercises(grading, monkeypatch: pytest.MonkeyPatch  # type: ignore[no-untyped-def]
                                                   ) -> None:
    lend_pool(monkeypatch, lambda: LentWorker(grading.worker))
    result = invoke(["selfcheck", "--round", "prefix-products", "--flavor", "numpy",
                     "--seed", "5", "--jobs", "1"])
    assert result.exit_code == 0, result.output
    assert "numpy" in result.output and "torch" not in result.output
    assert "selfcheck passed" in result.output
