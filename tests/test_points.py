"""One rule for the points every output shows: eighths of a point (results.POINT_UNITS), a part's
checks apportioned by largest remainder, so that the checks shown add up to the part shown and
the parts to the total, in the scorecard, the JSON, the CSV, Classroom's and Gradescope's."""

from __future__ import annotations

import base64
import csv
import io
import json
import random
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from grader.checks.table import checks_for
from grader.cli import cli
from grader.engine.results import (
    POINT_UNITS,
    CheckResult,
    apportion,
    points_text,
    scale_to_weight,
)
from grader.engine.rounds import installed
from grader.engine.workspace import WorkspaceError, load_config

from helpers import LentWorker, lend_pool, run_grader, solution, write_workspace

AWKWARD = (100.0, 33.125, 20.375, 7.0, 0.125, 1000.875)


def eighths(points: float) -> bool:
    return points * POINT_UNITS == int(points * POINT_UNITS)


PARTS = [(r, p.id, f) for r in installed().values() for p in r.parts for f in p.flavors]


@pytest.mark.parametrize(("round_", "part_id", "flavor"), PARTS,
                         ids=[f"{r.id}-{p}-{f}" for r, p, f in PARTS])
def test_every_parts_points_add_up_in_eighths_whatever_the_weight(round_, part_id: str,
                                                                  flavor: str) -> None:
    """Every round's check table, under awkward weights and random outcomes: each check's
    points are eighths, the maxima add up to the weight exactly, a pass earns its whole
    maximum and nothing else does, and the part's score strays from the exact one by less than
    an eighth per check."""
    specs = checks_for(round_, part_id, flavor)
    rng = random.Random(f"{round_.id}{part_id}{flavor}")
    for weight in (*AWKWARD, round_.part(part_id).weight):
        for _ in range(20):
            results = []
            for spec in specs:
                status = rng.choice(["passed", "failed", "failed", "error", "skipped"])
                fraction = 1.0 if status == "passed" else \
                    rng.choice([0.0, rng.random()]) if status == "failed" else 0.0
                points = spec.points * rng.choice([1.0, 1.0, 1 / 3, 0.0])
                results.append(CheckResult(spec.id, spec.title, status, points * fraction,
                                           points))
            total = sum(r.max_score for r in results)
            exact = sum(r.score for r in results) * weight / total if total else 0.0
            scale_to_weight(results, weight)
            assert all(eighths(r.score) and eighths(r.max_score) for r in results)
            assert sum(r.max_score for r in results) == (weight if total else 0.0)
            for r in results:
                assert 0 <= r.score <= r.max_score
                assert (r.score == r.max_score) == (r.status == "passed" or r.max_score == 0)
            assert abs(sum(r.score for r in results) - exact) < len(results) / POINT_UNITS


def test_apportion_gives_the_leftover_eighths_to_the_largest_remainders() -> None:
    assert apportion([20 / 21, 20 / 21 * 6, 20 / 21 * 14], 20) == [0.875, 5.75, 13.375]
    assert apportion([1 / 3] * 3, 1) == [0.375, 0.375, 0.25]
    assert apportion([], 0) == []


@pytest.mark.parametrize(("points", "shown"), [(14.0, "14.0"), (0.875, "0.875"),
                                                (12.5, "12.5"), (6.625, "6.625"),
                                                (1000.125, "1000.125"), (0.0, "0.0")])
def test_points_are_shown_exactly(points: float, shown: str) -> None:
    assert points_text(points) == shown


@pytest.mark.parametrize("value", ["33.3", "0.1", "1e-3"])
def test_a_coachs_points_that_are_no_eighths_are_refused_with_a_reason(value: str,
                                                                       tmp_path: Path) -> None:
    config = tmp_path / "grader.toml"
    config.write_text(f'round = "prefix-products"\n[points]\npart1 = {value}\n')
    with pytest.raises(WorkspaceError, match=r"points.part1 must be a multiple of 1/8, got "):
        load_config(config)
    refused = run_grader("grade", tmp_path, "--config", config, "--no-sandbox", cwd=tmp_path)
    assert refused.returncode == 1 and "Traceback" not in refused.stderr
    assert "must be a multiple of 1/8" in refused.stderr


def classroom_tests(line: str) -> dict[str, float]:
    doc = json.loads(base64.b64decode(line))
    return {re.sub(r".*\((.*)\)$", r"\1", t["name"]): t["score"] for t in doc["tests"]}


def test_every_output_of_check_shows_the_same_points(runner: CliRunner, tmp_path: Path) -> None:
    """A partly right part 1 (right values, quadratic cost: the complexity and aliasing checks
    fail) under an awkward weight, through the command (in this process, grading in the
    session's worker): the JSON's checks add up to its part and its total, Classroom's tests
    carry the same points, and the scorecard prints them."""
    case = solution("part1_recomputes_from_scratch")
    root = write_workspace(tmp_path / "ws", "numpy", "stubs", case.files("numpy"))
    with (root / "grader.toml").open("a") as config:
        config.write("\n[points]\npart1 = 20.375\n")
    common = ["check", "part1", "--seed", "3", "--no-sandbox", "--workspace", str(root)]
    doc = json.loads(runner.invoke(cli, [*common, "--json"]).stdout)
    (part,) = doc["parts"]
    checks = {c["id"]: c["score"] for c in part["checks"]}
    assert part["max_score"] == doc["max_score"] == 20.375
    assert sum(checks.values()) == part["score"] == doc["score"]
    assert sum(c["max_score"] for c in part["checks"]) == 20.375
    assert all(eighths(c["score"]) and eighths(c["max_score"]) for c in part["checks"])
    assert 0 < part["score"] < 20.375

    line = runner.invoke(cli, [*common, "--format", "classroom"]).stdout.strip()
    assert classroom_tests(line) == checks
    assert json.loads(base64.b64decode(line))["max_score"] == 20.375

    text = runner.invoke(cli, common).stdout
    assert f"part1 · In-place forward   {points_text(part['score'])}/20.375" in text
    assert f"Score {points_text(doc['score'])}/20.375" in text
    for check in part["checks"]:
        row = next(line for line in text.splitlines() if f" {check['id']} " in line)
        assert row.rstrip().endswith(f"{points_text(check['score'])}/"
                                     f"{points_text(check['max_score'])}")


def test_every_output_of_grade_shows_the_same_points(grading, runner: CliRunner,  # type: ignore[no-untyped-def]
                                                     monkeypatch: pytest.MonkeyPatch,
                                                     tmp_path: Path) -> None:
    """The same part in a batch: the table, --json, --csv and Gradescope's results.json (the
    command in this process, grading in the session's worker)."""
    case = solution("part1_recomputes_from_scratch")
    root = write_workspace(tmp_path / "sub", "numpy", "stubs", case.files("numpy"))
    config = tmp_path / "coach.toml"
    config.write_text('round = "prefix-products"\nflavor = "numpy"\nparts = ["part1", "part2"]'
                      '\n[points]\npart1 = 20.375\npart2 = 13.625\n')
    common = ["grade", str(root), "--config", str(config), "--seed", "3", "--no-sandbox"]
    outputs = tmp_path / "out"
    outputs.mkdir()
    lend_pool(monkeypatch, lambda: LentWorker(grading.worker))
    done = runner.invoke(cli, [*common, "--json", "--csv", str(outputs / "rows.csv"),
                               "--gradescope", str(outputs / "results.json")])
    assert done.exit_code == 0, done.output
    (row,) = json.loads(done.stdout)["submissions"]
    parts = {p["id"]: p for p in row["parts"]}
    assert row["max_score"] == 34.0 and row["score"] == sum(p["score"] for p in parts.values())
    for part in parts.values():
        assert sum(c["score"] for c in part["checks"]) == part["score"]
    assert parts["part2"]["score"] == 0.0 and 0 < parts["part1"]["score"] < 20.375

    (line,) = csv.DictReader(io.StringIO((outputs / "rows.csv").read_text()))
    assert (line["score"], line["max_score"], line["part1"], line["part2"]) == (
        points_text(row["score"]), "34.0", points_text(parts["part1"]["score"]), "0.0")

    gradescope = json.loads((outputs / "results.json").read_text())
    assert gradescope["score"] == row["score"]
    assert {t["name"].rsplit("(", 1)[1].rstrip(")"): t["score"] for t in gradescope["tests"]} == \
        {c["id"]: c["score"] for p in parts.values() for c in p["checks"]}
    assert gradescope["output"].startswith(f"Score {points_text(row['score'])}/34.0\n"
                                           f"  part1 In-place forward: "
                                           f"{points_text(parts['part1']['score'])}/20.375")

    table = runner.invoke(cli, common).stdout
    assert "/20.375" in table and "/13.625" in table and "/34.0" in table
    assert f"│ {points_text(row['score'])} │" in table.replace("  ", " ")
