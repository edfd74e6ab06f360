"""Hostile submissions: hangs, crashes, exits, output floods, memory hogs and patched
comparisons. The expect.toml of each tests/solutions/hostile_* folder pins the status of the
named checks (test_solutions runs those); this module checks what a status cannot show: how many
checks a hang costs, where printed output goes, and that the worker outlives all of it."""

from __future__ import annotations

import re

import pytest

from grader.checks.table import checks_for
from grader.engine.results import RunResult
from grader.runner.child import OUTPUT_LIMIT
from grader.runner.children import BACKSTOP

from helpers import PREFIX, all_solutions, checks_by_id, in_quick_tier, solution


def graded(grading, name: str, flavor: str = "numpy") -> RunResult:
    return grading.solution(solution(name), flavor)


def statuses(result: RunResult, part_id: str) -> list[str]:
    return [c.status for p in result.parts if p.id == part_id for c in p.checks]


def test_a_hang_costs_one_timeout_and_the_other_parts_are_still_graded(grading) -> None:
    result = graded(grading, "hostile_hang_in_function")
    part3 = statuses(result, "part3")
    assert part3[0] == "timeout"
    assert set(part3[1:]) == {"skipped"}, part3
    assert len(part3) == len(checks_for(PREFIX, "part3", "numpy"))
    for part in result.parts:
        if part.id != "part3":
            assert part.passed, [(c.id, c.status, c.message) for c in part.checks]
    # Bounded: one timeout for the part (of CPU time: the hang spins), not one per check of
    # the hung part, whatever the machine's load did to the clock.
    timeout = solution("hostile_hang_in_function").timeout_s
    hung = [c for p in result.parts if p.id == "part3" for c in p.checks]
    assert re.match(rf"did not finish within ({timeout:g} s of CPU time|"
                    rf"{BACKSTOP * timeout:g} s on the clock)", hung[0].message), hung[0].message


def test_skipped_after_a_hang_scores_nothing_and_says_why(grading) -> None:
    result = graded(grading, "hostile_hang_in_function")
    for check in [c for p in result.parts if p.id == "part3" for c in p.checks][1:]:
        assert check.score == 0 and check.message.startswith("not run:")


def test_a_hang_at_import_costs_one_timeout(grading) -> None:
    result = graded(grading, "hostile_hang_at_import")
    assert statuses(result, "part4") == ["timeout"] + ["skipped"] * (
        len(checks_for(PREFIX, "part4", "numpy")) - 1)
    assert [p.id for p in result.parts] == ["part4", "part1"]
    assert result.parts[1].passed


def test_an_import_failure_is_an_error_on_every_check_of_the_part(grading) -> None:
    for name in ("hostile_syntax_error", "hostile_import_exception"):
        result = graded(grading, name)
        assert set(statuses(result, "part1")) == {"error"}, name
        assert all(c.score == 0 for c in result.parts[0].checks)


def test_printed_output_is_captured_trimmed_and_kept_apart(grading) -> None:
    result = graded(grading, "hostile_print_spam")
    checks = checks_by_id(result)
    first = result.parts[0].checks[0]
    assert first.output.startswith("importing part 1 ===="), "import-time output is lost"
    correctness = checks["part1.correctness"].output
    assert correctness.startswith("debug debug")
    assert "warning warning" not in correctness[:OUTPUT_LIMIT]  # the cap was reached first
    assert correctness.endswith("more characters not shown)")
    for check in checks.values():
        assert len(check.output) < 2 * OUTPUT_LIMIT + 200, check.id
        assert "raw stdout" not in check.output and "raw stderr" not in check.output
    assert "--- your code printed ---" in checks["part1.correctness"].to_dict()["message"]


def test_a_crash_costs_only_the_check_it_happened_in(grading) -> None:
    """After os._exit or SIGSEGV a fresh child runs the next check."""
    exited = checks_by_id(graded(grading, "hostile_os_exit"))
    assert exited["part1.explanation"].message.startswith("part1_inplace.py has no EXPLANATION")
    crashed = graded(grading, "hostile_segfault", "torch")
    assert set(statuses(crashed, "part2")) == {"error"}
    assert all("SIGSEGV" in c.message for c in crashed.parts[0].checks)


@pytest.mark.parametrize("quick", [True, pytest.param(False, marks=pytest.mark.slow)],
                         ids=["quick-tier-flavors", "slow-tier-flavors"])
def test_the_worker_outlives_every_hostile_submission(grading, quick: bool) -> None:
    """Every hostile folder in the flavors its tier grades (test_solutions grades the same
    ones in the same test process: each grading is made once)."""
    for case in all_solutions():
        if case.name.startswith("hostile_"):
            for flavor in case.flavors:
                if in_quick_tier(case, flavor) == quick:
                    grading.solution(case, flavor)
    assert grading.worker.process.poll() is None


def test_what_hung_code_printed_before_the_timeout_is_kept(grading) -> None:
    """The worker asks a hung child for its output before killing it: a debug print before an
    endless loop is the best clue a candidate has."""
    in_function = checks_by_id(graded(grading, "hostile_hang_in_function"))["part3.validation"]
    assert in_function.status == "timeout"
    assert in_function.output.strip() == "backward called: about to loop forever"
    at_import = checks_by_id(graded(grading, "hostile_hang_at_import"))["part4.validation"]
    assert at_import.status == "timeout"
    assert at_import.output.strip() == "importing part 4: about to loop forever"
