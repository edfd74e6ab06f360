"""A check that watches calls for something other than their values (inputs left unchanged,
a fresh result, a dtype, a type) judges calls whose answers match the reference's: code that
tells a watched call apart (its stack, its probe) cannot answer it without the work."""

from __future__ import annotations

from dataclasses import replace
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


@pytest.mark.parametrize(("plain", "alike"), [
    ([{"raised": None, "value": np.zeros(5)}], True),            # an honest slip: wrong alike
    ([{"raised": None, "value": [0.0] * 5}], True),              # the same answer as a list
    ([{"raised": None, "value": np.zeros(5) + 1e-13}], True),    # rounding apart
    ([{"raised": None, "value": np.arange(5.0)}], False),        # right when not watched
    ([{"raised": {"type": "ValueError"}, "value": None}], False),
    ([], False), ("not rows", False), ([{"value": np.zeros(4)}], False),
])
def test_a_wrong_watched_answer_is_held_to_the_same_call_made_plainly(plain: Any,
                                                                      alike: bool) -> None:
    """The Recheck of a watched call that answered wrong calls call_each on that case alone,
    made as the row's plain call, and finds it alike only where it answered the same."""
    reference = [{"raised": None, "answer": np.arange(3.0)},
                 {"raised": None, "answer": np.arange(5.0)}]
    mine = [{"raised": None, "answer": np.arange(3.0)},
            {"raised": None, "answer": np.zeros(5)}]
    judge = with_answers(_rows_judge, CASES, "the result",
                         plain={"function": "f", "args": ["x"], "returns": "tree"})
    recheck = judge({"yours": mine, "baseline": reference, "baseline_error": ""}).recheck
    assert recheck is not None
    assert recheck.probe == "call_each"
    assert recheck.args["function"] == "f" and recheck.args["returns"] == "tree"
    assert [c["label"] for c in recheck.args["cases"]] == [CASES[1].data()["label"]]
    assert recheck.alike(plain) is alike
    assert _judged(mine, reference).recheck is None  # no plain call: a run helper's


def test_every_watched_call_that_answered_wrong_is_held_to_its_plain_call() -> None:
    """Code wrong alike in one case (an edge failed on purpose) and wrong only when watched in
    another is not alike: the Recheck takes every wrong watched call, not the first."""
    reference = [{"raised": None, "answer": np.arange(3.0)},
                 {"raised": None, "answer": np.arange(5.0)}]
    mine = [{"raised": None, "answer": np.zeros(3)}, {"raised": None, "answer": np.zeros(5)}]
    judge = with_answers(_rows_judge, CASES, "the result", plain={"function": "f"})
    recheck = judge({"yours": mine, "baseline": reference, "baseline_error": ""}).recheck
    assert recheck is not None and len(recheck.args["cases"]) == 2
    wrong_alike = {"raised": None, "value": np.zeros(3)}
    assert recheck.alike([wrong_alike, {"raised": None, "value": np.zeros(5)}])
    assert not recheck.alike([wrong_alike, {"raised": None, "value": np.arange(5.0)}])


@pytest.mark.parametrize(("projection", "alike"), [
    ([0.5, 1.0], True), ([0.5 + 1e-12, 1.0], True), ([2.0, 1.0], False), (None, False)])
def test_a_counted_call_that_answered_wrong_is_held_to_its_plain_projection(
        projection: Any, alike: bool) -> None:
    from grader.checks.kinds import _recheck_projections

    args = {"function": "f", "args": ["x"], "call": None, "nonce": 7, "measure": "flops"}
    recheck = _recheck_projections(args, [(CASES[0], [0.5, 1.0]), (CASES[1], [3.0, 2.0])])
    assert recheck.probe == "plain_projections"
    assert recheck.args == {"function": "f", "args": ["x"], "call": None, "nonce": 7,
                            "cases": [CASES[0].data(), CASES[1].data()]}
    second = {"raised": None, "projection": [3.0, 2.0]}
    assert recheck.alike([{"raised": None, "projection": projection}, second]) is alike
    assert recheck.alike([{"raised": {"type": "E"}, "projection": [0.5, 1.0]}, second]) is False
    assert recheck.alike([second]) is False  # one call of two


def test_plain_projections_projects_as_the_counter_does() -> None:
    """The plain call's projection equals cost_counts' of the same call with the same nonce:
    a right answer under the counter and outside it are alike."""
    from pathlib import Path
    from types import ModuleType

    from grader.probes.api import Api
    from grader.probes.backends import make_backend

    module = ModuleType("candidate")
    module.f = lambda x: x * 2.0  # type: ignore[attr-defined]
    api = Api(module, make_backend("numpy"), Path("."))
    cases = [c.data() for c in CASES]
    counted = library.cost_counts(api, "f", cases, args=["x"], measure="operations", nonce=3)
    plain = library.plain_projections(api, "f", cases, args=["x"], nonce=3)
    assert [row["projection"] for row in plain] == counted["projections"]
    assert all(row["raised"] is None for row in plain)


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
    rows = library.reference_twice(object(), probe, {}, ["round-folder", "part2"],  # type: ignore[arg-type]
                                   key)
    assert seen == [("round-folder", ["part2"])]
    assert [row[key] is None for row in rows] == [False, True, True]
    np.testing.assert_array_equal(rows[0][key], np.ones(2))


def _watched(otherwise: Verdict) -> Verdict:
    """A watched call's failure (no Recheck: none is run here) that gives way to `otherwise`."""
    return replace(failed("watched answered otherwise"), by_values=True, otherwise=otherwise)


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
    from types import SimpleNamespace

    from grader.runner.worker import explained_by_values

    results = [_row("part1.correctness", values, 2), _row("part1.inputs_unchanged", "failed", 1),
               _row("part1.validation", "failed", 0)]
    explained_by_values(SimpleNamespace(  # type: ignore[arg-type]
        results=results, request=SimpleNamespace(flavor="torch"), unless_values={
            "part1.inputs_unchanged": _watched(passed("inputs unchanged")),
            "part1.validation": _watched(failed("other", hint="{{numpy: x | torch: y}}"))}))
    watched = results[1]
    if stands:
        assert (watched.status, watched.message, watched.score) == \
            ("failed", "watched answered otherwise", 0.0)
    else:
        assert (watched.status, watched.message, watched.hint, watched.score) == \
            ("passed", "inputs unchanged", None, 2.0)
    assert (results[2].status, results[2].message) == \
        ("failed", "watched answered otherwise" if stands else "other")
    assert results[2].hint == ("h" if stands else "y")  # in the candidate's flavor


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
    assert _value_case_rows(rows) == {1: ("many", ("part1.correctness",))}


def test_every_call_a_check_of_values_makes_keeps_what_the_property_checks_judge() -> None:
    """call_each reads, in each call that returned, the inputs it changed, those its result
    shares memory with, the result's dtype and device against the first input's, and whether
    it is a Python float: a property check borrowing those calls judges calls no code can tell
    from the ones whose values are judged."""
    from pathlib import Path
    from types import ModuleType

    from grader.probes.api import Api
    from grader.probes.backends import make_backend

    def sloppy(x: np.ndarray) -> Any:
        if x.size == 1:
            return float(x[0])
        x *= 2.0
        return x.astype(np.float32) if x.size == 3 else x

    module = ModuleType("candidate")
    module.f = sloppy  # type: ignore[attr-defined]
    api = Api(module, make_backend("numpy"), Path("."))
    cases = [{"inputs": {"x": np.ones(n)}, "label": f"n={n}", "extra": {}} for n in (1, 3, 5)]
    kept = [row["kept"] for row in library.call_each(api, "f", cases, args=["x"], returns="tree")]
    assert kept[0] == {"wrote": [], "shared": [], "is_float": True, "type": "builtins.float"}
    assert kept[1] == {"wrote": ["x"], "shared": [], "is_float": False,
                       "type": "numpy.ndarray", "got": ["float32", "cpu"],
                       "want": ["float64", "cpu"]}
    assert (kept[2]["wrote"], kept[2]["shared"], kept[2]["got"]) == \
        (["x"], ["x"], ["float64", "cpu"])


def test_a_property_broken_in_a_borrowed_call_fails_where_the_watched_calls_kept_it() -> None:
    def kept(label: str, call: dict[str, Any]) -> Verdict | None:
        return failed(f"{label}: wrote {call['wrote']}") if call["wrote"] else None

    judge = with_answers(_rows_judge, CASES, "the result", kept=kept)
    held = {"yours": [{"raised": None}], "baseline": None, "baseline_error": ""}
    assert judge(held).status == "passed"
    borrowed = [("n=2", {"wrote": []}), ("n=4", {"wrote": ["x"]}), ("n=6", "not a dict")]
    assert judge({**held, "kept": borrowed}).message == "n=4: wrote ['x']"
    assert judge({**held, "yours": [{"held": False}], "kept": borrowed}).message == "broke"


def test_an_input_a_later_call_of_the_check_of_values_writes_is_read_as_written() -> None:
    from pathlib import Path
    from types import ModuleType

    from grader.probes.api import Api
    from grader.probes.backends import make_backend

    handed: list[np.ndarray] = []

    def clears_the_last(x: np.ndarray) -> np.ndarray:
        for old in handed:
            old[...] = 0.0
        handed[:] = [x]
        return x * 2.0

    module = ModuleType("candidate")
    module.f = clears_the_last  # type: ignore[attr-defined]
    api = Api(module, make_backend("numpy"), Path("."))
    cases = [{"inputs": {"x": np.ones(n)}, "label": f"n={n}", "extra": {}} for n in (2, 3)]
    kept = [row["kept"] for row in library.call_each(api, "f", cases, args=["x"])]
    assert (kept[0]["wrote"], kept[0].get("later")) == (["x"], ["x"])
    assert (kept[1]["wrote"], kept[1].get("later")) == ([], None)
