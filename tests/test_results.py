"""The result records and the JSON document they become; and a check that the JSON validator
the other tests rely on really rejects what the documented shape forbids."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from grader.cli import cli
from grader.engine.results import (
    SHORT_OF_MEMORY,
    CheckResult,
    PartResult,
    RunResult,
    weigh_properties,
)
from grader.engine.triage import triage

from helpers import validate_run_json


def run() -> RunResult:
    checks = [CheckResult("part1.a", "A", "passed", 3.0, 3.0, duration_s=0.25),
              CheckResult("part1.b", "B", "failed", 0.5, 2.0, message="half", hint="try"),
              CheckResult("part1.c", "C", "skipped", 0.0, 1.0, message="not run")]
    return RunResult("prefix-products", "torch", 11,
                     [PartResult("part1", "In-place forward", checks)])


def test_scores_add_up_and_skips_are_neither_pass_nor_failure() -> None:
    result = run()
    part = result.parts[0]
    assert (part.score, part.max_score) == (3.5, 6.0)
    first = triage(result).first
    assert not part.passed and first is not None and first.root is part.checks[1]
    part.checks[1].status = "passed"
    # A skip that keeps its points (the code hid what it measures) is no pass...
    assert not part.passed and triage(result).first is None
    # ...one that cannot apply on this machine (worth nothing here) does not stand in the way.
    part.checks[2].max_score = 0.0
    assert part.passed and result.all_passed


def test_a_check_round_trips_over_the_wire() -> None:
    original = CheckResult("part3.x", "X", "error", 0.0, 5.0, "boom", None, 1.5, "printed")
    assert CheckResult.from_wire(json.loads(json.dumps(asdict(original)))) == original


def test_the_json_document_is_valid() -> None:
    validate_run_json(json.loads(json.dumps(run().to_dict())))


Mutation = Callable[[dict[str, Any]], None]
BROKEN: dict[str, Mutation] = {
    "extra top-level key": lambda d: d.update(extra=1),
    "missing seed": lambda d: d.pop("seed"),
    "seed as string": lambda d: d.update(seed="11"),
    "unknown flavor": lambda d: d.update(flavor="jax"),
    "unknown status": lambda d: d["parts"][0]["checks"][0].update(status="ok"),
    "score as string": lambda d: d["parts"][0]["checks"][0].update(score="3"),
    "hint as number": lambda d: d["parts"][0]["checks"][1].update(hint=1),
    "missing duration": lambda d: d["parts"][0]["checks"][0].pop("duration_s"),
    "part score not the sum": lambda d: d["parts"][0].update(score=9.0),
    "run max_score not the sum": lambda d: d.update(max_score=99.0),
    "passed without full points": lambda d: d["parts"][0]["checks"][0].update(score=1.0),
    "skipped with points": lambda d: d["parts"][0]["checks"][2].update(score=1.0),
    "unknown part": lambda d: d["parts"][0].update(id="part9"),
    "check under the wrong part": lambda d: d["parts"][0]["checks"][0].update(id="part2.a"),
}


@pytest.mark.parametrize("mutate", BROKEN.values(), ids=BROKEN.keys())
def test_the_validator_rejects_what_the_format_forbids(mutate: Mutation) -> None:
    doc = copy.deepcopy(run().to_dict())
    mutate(doc)
    with pytest.raises(AssertionError):
        validate_run_json(doc)


def test_undecided_checks_are_named_with_the_points_they_hold_back() -> None:
    """The one line a row's notes, Gradescope's summary and the scorecard carry; Classroom
    reports such a test as an error (nothing was decided), never as a pass or a fail."""
    from grader.coach.classroom import test_status
    from grader.engine.results import undecided_note

    checks = [CheckResult("part3.complexity", "t", "undecided", 0.0, 6.0),
              CheckResult("part4.timing", "t", "undecided", 0.0, 1.5),
              CheckResult("part3.correctness", "t", "passed", 4.0, 4.0)]
    assert undecided_note(checks) == (
        "the machine was too busy to judge part3.complexity, part4.timing (7.5 points held "
        "back, not lost): re-run when it is quieter")
    assert undecided_note(checks[2:]) == ""
    short = CheckResult("part1.correctness", "t", "undecided", 0.0, 2.0,
                        message=f"{SHORT_OF_MEMORY}\nthe process running your code was ended")
    assert undecided_note([*checks, short]) == (
        "the machine was too busy to judge part3.complexity, part4.timing (7.5 points held "
        "back, not lost): re-run when it is quieter; the machine ran out of memory judging "
        "part1.correctness (2.0 points held back, not lost): re-run with more memory free")
    assert [test_status(c) for c in checks] == ["error", "error", "pass"]


def _part(values: list[tuple[str, float, float]],
          properties: list[tuple[str, float, float]]) -> list[CheckResult]:
    """Checks of values (rank 2) and properties (rank 1): (status, score, max_score) each."""
    return ([CheckResult(f"part1.v{i}", "V", status, score, top, rank=2)  # type: ignore[arg-type]
             for i, (status, score, top) in enumerate(values)]
            + [CheckResult(f"part1.p{i}", "P", status, score, top, message="held")  # type: ignore[arg-type]
               for i, (status, score, top) in enumerate(properties)])


def test_a_property_is_worth_the_share_of_values_its_part_earned() -> None:
    """Values half earned: a property that held keeps half its points (a whole pass of the
    smaller maximum), the other half goes to the values missed, in proportion to what each
    missed; a property that failed keeps its maximum and earns nothing; the total is kept."""
    checks = _part([("passed", 4.0, 4.0), ("failed", 0.0, 3.0), ("failed", 0.0, 1.0)],
                   [("passed", 2.0, 2.0), ("failed", 0.0, 1.0)])
    weigh_properties(checks)
    assert [(c.score, c.max_score) for c in checks] == [
        (4.0, 4.0), (0.0, 3.75), (0.0, 1.25), (1.0, 1.0), (0.0, 1.0)]
    assert checks[3].message == "held; worth 50% of its points, the share the part's checks " \
                                "of values earned"
    assert checks[4].message == "held"


@pytest.mark.parametrize(("values", "properties"), [
    ([("passed", 4.0, 4.0)], [("passed", 2.0, 2.0)]),  # values all right
    ([], [("passed", 2.0, 2.0)]),                       # no check of values in the part
    ([("failed", 0.0, 0.0)], [("passed", 2.0, 2.0)]),   # one worth nothing here
])
def test_a_property_keeps_its_points_where_values_do_not_weigh_it(
        values: list[tuple[str, float, float]], properties: list[tuple[str, float, float]]) -> None:
    checks = _part(values, properties)
    before = [(c.score, c.max_score, c.message) for c in checks]
    weigh_properties(checks)
    assert [(c.score, c.max_score, c.message) for c in checks] == before


def test_code_that_computes_nothing_earns_no_points_for_properties_that_held(
        runner: CliRunner, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every function of a round answering None, or its first argument, leaves its inputs as
    they were, allocates nothing and keeps their dtype: none of that is worth a point while
    no value is right."""
    scores = {}
    for answer in ("none", "echo"):
        root = tmp_path / answer
        assert runner.invoke(cli, ["init", str(root), "--flavor", "numpy"]).exit_code == 0
        for path in (root / "exercises").glob("part*.py"):
            path.write_text(_answering(path.read_text(), answer))
        monkeypatch.chdir(root)
        doc = json.loads(runner.invoke(cli, ["check", "--json"]).stdout)
        scores[answer] = {c["id"]: c["score"] for p in doc["parts"] for c in p["checks"]
                          if c["score"] > 0}
    # The echo's empty result is right, and the dtype it keeps worth that share of its points.
    assert scores["none"] == {}
    assert set(scores["echo"]) == {"part2.empty", "part2.dtype_device"}
    assert sum(scores["echo"].values()) < 2.5


def _answering(source: str, answer: str) -> str:
    """The module with each public function's body replaced by `return None`, or by returning
    its first argument."""
    import ast

    tree = ast.parse(source)
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef) and not node.name.startswith("_"):
            first = node.args.args[0].arg if node.args.args else None
            value: ast.expr = (ast.Name(first, ast.Load()) if answer == "echo" and first
                               else ast.Constant(None))
            node.body = [ast.Return(value)]
    return ast.unparse(tree)


def _failing(check_id: str, after: list[str], status: str = "failed") -> CheckResult:
    return CheckResult(id=check_id, title="", status=status, score=0.0,  # type: ignore[arg-type]
                       max_score=1.0, message="m", hint="h", after=after)


def test_two_failures_each_named_in_the_others_after_fold_under_the_first_met() -> None:
    """A check that voided another's values (the values' row then follows from it) whose own
    row says it follows from those values: the scorecard's triage and the hints that point
    at a root end, under the check the part lists first being the other's root, where
    following the chain went round for ever (a worker silent until its watchdog killed it)."""
    from grader.runner.worker import FOLLOWS_HINT, point_folded_failures_at_their_root

    checks = [_failing("p.values", ["p.cost"]), _failing("p.cost", ["p.values"], "timeout"),
              _failing("p.later", ["p.values"])]
    found = triage(RunResult("r", "numpy", 0, [PartResult("p", "P", checks)]))
    assert [(t.root.id, [c.id for c in t.follows]) for t in found.troubles] == [
        ("p.cost", ["p.values", "p.later"])]
    point_folded_failures_at_their_root(checks)
    assert [c.hint for c in checks] == [
        f"{FOLLOWS_HINT.format(root='p.cost')} h", "h", f"{FOLLOWS_HINT.format(root='p.cost')} h"]


def test_a_check_that_voids_values_is_their_root_whatever_its_table_says() -> None:
    from grader.runner.worker import void_results

    class Voiding:
        id, voids, void_message = "p.cost", ["p.values"], "not counted"

    values, cost = _failing("p.values", [], "passed"), _failing("p.cost", ["p.values"], "timeout")
    void_results([Voiding()], [values, cost], {}, set())  # type: ignore[list-item]
    assert (values.status, values.after, cost.after) == ("failed", ["p.cost"], [])
