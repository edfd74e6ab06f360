"""A check that watches calls for something other than their values (inputs left unchanged,
a fresh result, a dtype, a type) judges calls whose answers match the reference's: code that
tells a watched call apart (its stack, its probe) cannot answer it without the work."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from grader.checks.base import Verdict, failed, passed
from grader.checks.cases import Case
from grader.checks.kinds import WATCHED_ANSWERS_HINT, with_answers
from grader.probes import library

CASES = [Case({"x": np.ones(3)}, (("N", 3),)), Case({"x": np.ones(5)}, (("N", 5),))]


def _rows_judge(rows: list[dict[str, Any]]) -> Verdict:
    """The property's own judge: every row must say it held."""
    return passed("held") if all(r.get("held", True) for r in rows) else failed("broke")


def _judged(mine: list[dict[str, Any]], reference: list[dict[str, Any]] | None) -> Verdict:
    judge = with_answers(_rows_judge, CASES, "the result")
    return judge({"yours": mine, "baseline": reference, "baseline_error": ""})


def test_a_watched_call_that_answers_otherwise_fails_and_follows_from_the_values() -> None:
    reference = [{"raised": None, "answer": np.arange(3.0)},
                 {"raised": None, "answer": np.arange(5.0)}]
    mine = [{"raised": None, "answer": np.arange(3.0)},
            {"raised": None, "answer": np.zeros(5)}]
    verdict = _judged(mine, reference)
    assert verdict.status == "failed" and verdict.by_values
    assert verdict.hint == WATCHED_ANSWERS_HINT
    assert verdict.message == (
        "N=5, float64: a call this check watched answered otherwise than the reference on the "
        "same inputs (first wrong entry the result[1]: yours 0, expected 1; max abs error 4, "
        "max rel error 1), so what it saw is not what the work does")
    assert _judged([mine[0], {"raised": None, "answer": None}], reference).status == "failed"


@pytest.mark.parametrize(("mine", "theirs"), [
    (np.arange(3.0), [0.0, 1.0, 2.0]),                       # an array for a list of numbers
    ([np.ones(2), np.zeros(2)], np.array([[1.0, 1.0], [0.0, 0.0]])),  # a list of arrays
    (2.0, np.array(2.0)),                                    # a number for a 0-d array
    ({"a": 1.0, "b": [1.0, 2.0], "extra": "kept"}, {"a": np.array(1.0), "b": np.arange(1.0, 3)}),
    (np.arange(3.0) + 1e-12, np.arange(3.0)),                # rounding apart
    (np.array([np.nan, 1.0]), np.array([np.nan, 1.0])),      # the same NaN
])
def test_one_answer_in_another_form_the_contract_allows_passes(mine: Any, theirs: Any) -> None:
    verdict = _judged([{"raised": None, "answer": mine}] * 2,
                      [{"raised": None, "answer": theirs}] * 2)
    assert verdict.status == "passed", verdict.message


def test_the_answer_is_compared_only_where_the_property_held_and_the_reference_gave_one(
        ) -> None:
    reference = [{"raised": None, "answer": np.arange(3.0)}] * 2
    wrong = {"raised": None, "answer": np.zeros(3)}
    assert _judged([{**wrong, "held": False}, wrong], reference).message == "broke"
    assert _judged([wrong, wrong], None).status == "passed"              # no baseline
    assert _judged([wrong, wrong], [{"raised": None, "answer": None}] * 2).status == "passed"
    raised = {"raised": {"type": "ValueError"}, "answer": None}
    assert _judged([raised, raised], reference).status == "passed"      # the property's call
    assert with_answers(_rows_judge, CASES, "r")([wrong]).status == "passed"  # no baseline run


@pytest.mark.parametrize(("probe", "key"), [("inputs_after", "answer"), ("call_each", "value")])
def test_a_reference_answer_that_changes_from_run_to_run_is_held_to_nothing(
        monkeypatch: pytest.MonkeyPatch, probe: str, key: str) -> None:
    """A function that draws random numbers answers each call differently: no answer of the
    candidate's could be held to one of its draws, so none is kept."""
    runs = iter([[{key: np.ones(2)}, {key: 1.0}, {key: [np.ones(1)]}],
                 [{key: np.ones(2)}, {key: 2.0}, {key: [np.zeros(1)]}]])
    seen: list[tuple[str, list[str]]] = []

    def fake_reference(api: Any, folder: str, part: str) -> Any:
        seen.append((folder, [part]))
        return api

    monkeypatch.setattr(library, "reference_api", fake_reference)
    monkeypatch.setattr(library, "resolve", lambda api, name: lambda api, **args: next(runs))
    rows = library.reference_twice(object(), probe, {}, ["round-folder", "part2"])  # type: ignore[arg-type]
    assert seen == [("round-folder", ["part2"])]
    assert [row[key] is None for row in rows] == [False, True, True]
    np.testing.assert_array_equal(rows[0][key], np.ones(2))


def _row(check_id: str, status: str, rank: int) -> Any:
    from grader.engine.results import CheckResult

    return CheckResult(id=check_id, title="", status=status, score=0.0,  # type: ignore[arg-type]
                       max_score=2.0, message="watched answered otherwise", hint="h",
                       rank=rank)


@pytest.mark.parametrize(("values", "stands"), [("passed", True), ("failed", False)])
def test_a_wrong_watched_answer_stands_only_where_the_values_pass(values: str,
                                                                   stands: bool) -> None:
    """Code that tells the watched calls apart answers them wrong while its values pass; an
    honest slip answers them wrong as it does the rest, and the values' checks say so: its
    property is then judged as the check found it."""
    from grader.runner.worker import explained_by_values

    results = [_row("part1.correctness", values, 2), _row("part1.inputs_unchanged", "failed", 1),
               _row("part1.validation", "failed", 0)]
    explained_by_values(results, {"part1.inputs_unchanged": passed("inputs unchanged"),
                                  "part1.validation": failed("other", hint="x")})
    watched = results[1]
    if stands:
        assert (watched.status, watched.message, watched.score) == \
            ("failed", "watched answered otherwise", 0.0)
    else:
        assert (watched.status, watched.message, watched.hint, watched.score) == \
            ("passed", "inputs unchanged", None, 2.0)
    assert (results[2].status, results[2].message) == \
        ("failed", "watched answered otherwise" if stands else "other")


def test_a_watching_row_also_takes_the_inputs_of_the_correctness_row_calling_alike() -> None:
    """A property kept only on a watching row's own inputs (a dtype cast back at one shape)
    is watched on inputs like the correctness row's too; a row that calls its function
    another way (a run helper) keeps its own."""
    from grader.checks.table import _value_case_rows

    rows = [{"id": "part1.correctness", "kind": "correctness", "function": "f", "cases": "many",
             "args": ["W"]},
            {"id": "part1.dtype", "kind": "dtype_device", "function": "f", "cases": "two",
             "args": ["W"]},
            {"id": "part1.unchanged", "kind": "inputs_unchanged", "run": "f_on", "case": "one"},
            {"id": "part1.other", "kind": "keeps_dtype", "function": "f", "cases": "two",
             "args": ["W", "P"]},
            {"id": "part2.fresh", "kind": "fresh_result", "function": "f", "cases": "two",
             "args": ["W"]}]
    assert _value_case_rows(rows) == {1: "many"}
