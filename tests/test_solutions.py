"""The known solutions under tests/solutions/<round>/, each graded by the real grader: the check
meant to catch each mistake must fail (or time out, or error) with a hint that names it, and the
known-good ones must get full marks. One matrix over every installed round.

The cases are data (see helpers.py for the expect.toml format); this module only turns them into
tests, one per (solution, flavor).
"""

from __future__ import annotations

import re
from typing import Any

import pytest

from grader.checks.table import checks_for
from grader.engine.results import STATUSES
from grader.engine.rounds import installed

from helpers import Solution, all_solutions, checks_by_id, in_quick_tier

SOLUTIONS = all_solutions()


def case(solution: Solution, flavor: str) -> Any:
    """One (solution, flavor), in the slow tier unless the quick tier grades the folder in
    that flavor (helpers.in_quick_tier)."""
    return pytest.param(solution, flavor, id=f"{solution.key}[{flavor}]",
                        marks=[] if in_quick_tier(solution, flavor) else [pytest.mark.slow])


CASES = [case(s, f) for s in SOLUTIONS for f in s.flavors]


def test_every_round_has_known_solutions() -> None:
    """A round without a folder of known-buggy solutions is not tested end to end."""
    assert {s.round.id for s in SOLUTIONS} == set(installed())


def test_the_solution_data_is_well_formed() -> None:
    """Each manifest names real checks of the parts it grades, in flavors that have them."""
    assert SOLUTIONS, "no solutions found"
    for solution in SOLUTIONS:
        assert solution.about, solution.name
        assert set(solution.flavors) <= set(solution.round.flavors), solution.name
        assert solution.start in ("reference", "stubs"), solution.name
        assert solution.parts and set(solution.parts) <= set(solution.round.part_ids), \
            solution.name
        assert solution.expect or solution.full_marks, f"{solution.name} pins nothing"
        for expect in solution.expect:
            assert expect.status in STATUSES, (solution.name, expect)
            for flavor in set(expect.flavors) & set(solution.flavors):
                ids = {c.id for part in solution.parts
                       for c in checks_for(solution.round, part, flavor)}
                assert expect.check in ids, f"{solution.name}: {expect.check} ({flavor})"


@pytest.mark.parametrize(("solution", "flavor"), CASES)
def test_solution_gets_the_pinned_verdicts(grading, solution: Solution, flavor: str) -> None:
    result = grading.solution(solution, flavor)
    checks = checks_by_id(result)
    assert [p.id for p in result.parts] == list(solution.parts)
    if solution.full_marks:
        # Only checks that cannot apply here (GPU timing on a CPU) may be skipped.
        failing = {c.id: f"{c.status}: {c.message}" for c in checks.values()
                   if c.status != "passed" and not c.not_applicable}
        assert not failing, failing
        assert result.score == pytest.approx(result.max_score)
    else:
        assert result.score < result.max_score, "a buggy solution got full marks"
    for expect in solution.expect:
        if flavor not in expect.flavors:
            continue
        check = checks[expect.check]
        shown = f"{check.id}: {check.status}: {check.message!r}, hint {check.hint!r}"
        assert check.status == expect.status, shown
        if expect.hint is not None:
            assert check.hint is not None and expect.hint in check.hint, shown
        if expect.hint_lacks is not None:
            assert expect.hint_lacks not in (check.hint or ""), shown
        if expect.message is not None:
            assert re.search(expect.message, check.message), shown


def on_one_screen(result, width: int = 80, rows: int = 24) -> str:  # type: ignore[no-untyped-def]
    """The scorecard's last `rows` lines on a `width`-column terminal, box drawing and line
    breaks folded into single spaces."""
    from io import StringIO

    from rich.console import Console

    from grader.render import report

    console = Console(file=StringIO(), width=width, color_system=None)
    report.render_scorecard(console, result)
    last = console.file.getvalue().splitlines()[-rows:]  # type: ignore[attr-defined]
    return " ".join(" ".join(last).replace("│", " ").replace("╭", " ").replace("╰", " ").split())


NAMED = [case(s, f) for s in SOLUTIONS for f in s.flavors
         if len(s.parts) == 1 and any(e.hint and e.status == "failed" and f in e.flavors
                                      for e in s.expect)]


@pytest.mark.parametrize(("solution", "flavor"), NAMED)
def test_the_hint_that_names_the_mistake_is_on_the_first_screen(grading, solution: Solution,
                                                                 flavor: str) -> None:
    """On an 80x24 terminal, after `grader check PART`, the root cause's hint is visible
    without scrolling, and it is one of the hints the folder pins."""
    from grader.engine.triage import triage

    result = grading.solution(solution, flavor)
    first = triage(result).first
    assert first is not None
    pinned = [e.hint for e in solution.expect if e.hint and flavor in e.flavors]
    assert any(hint in (first.root.hint or "") for hint in pinned), (first.root.id,
                                                                    first.root.hint, pinned)
    screen = on_one_screen(result)
    assert " ".join((first.root.hint or "").split())[-60:] in screen, screen
