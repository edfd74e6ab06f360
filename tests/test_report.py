"""The renderers, on hand-built results: rendered into Console(file=StringIO(), width=100,
color_system=None) and read as text, as rich's own tests do."""

from __future__ import annotations

import json
from io import StringIO
from pathlib import Path

import pytest
from rich.console import Console

from grader.engine.results import SHORT_OF_MEMORY, CheckResult, PartResult, RunResult
from grader.engine.workspace import Settings, Workspace
from grader.render import report

from helpers import PREFIX, matches_golden, validate_run_json

EVIDENCE = ("N=3, D=2, float64: first wrong entry P[1, 0, 1]: yours 0.5, expected 1.25; max abs "
            "error 0.75, max rel error 0.6 (reproduce with `grader check part1 --seed 5`)")
HINT = "matmul is not commutative: the new factor goes on the right, P[i] = P[i-1] @ W[i]."


def check(id: str, status: str, score: float = 0.0, max_score: float = 2.0, **extra) -> CheckResult:
    return CheckResult(id=id, title=f"title of {id}", status=status, score=score,  # type: ignore[arg-type]
                       max_score=max_score, **extra)


def sample() -> RunResult:
    """part1 passes but for one skip; part2 fails with evidence, a hint and printed output."""
    part1 = PartResult("part1", "In-place forward", [
        check("part1.validation", "passed", 2.0),
        check("part1.memory", "skipped", message="could not measure memory here"),
    ])
    part2 = PartResult("part2", "Out-of-place forward", [
        check("part2.correctness", "failed", message=EVIDENCE, hint=HINT,
              output="\n".join(f"debug line {i}" for i in range(40))),
        check("part2.empty", "timeout", message="did not finish within 10 s"),
        check("part2.fresh_result", "skipped", message="not run: part2.empty timed out"),
    ])
    return RunResult(round="prefix-products", flavor="numpy", seed=5, parts=[part1, part2])


def render(result: RunResult) -> str:
    console = Console(file=StringIO(), width=100, color_system=None)
    report.render_scorecard(console, result)
    return console.file.getvalue()  # type: ignore[attr-defined]


def flat(text: str) -> str:
    """Text with rich's line wrapping and box borders folded into single spaces."""
    return " ".join(text.replace("│", " ").split())


def test_failure_panels_run_in_part_order_and_within_a_part_in_check_order() -> None:
    """Issue 24: the panels ran from the last part to the first. They follow the tables:
    part1's first, each part's roots in check order, every message printed once."""
    result = sample()
    result.parts[0].checks[0].status = "failed"
    result.parts[0].checks[0].message = "part1 evidence"
    result.parts[1].checks[1].rank = 2  # ranked above part2.correctness, still shown after it
    text = render(result)
    titles = [line.split()[3] for line in text.splitlines() if line.startswith("╭")]
    assert titles == ["part1.validation", "part2.correctness", "part2.empty"]
    assert text.count("yours 0.5, expected 1.25") == 1
    # part1's only root is the likeliest mistake, but its panel is no longer the last on screen
    assert text.splitlines()[-3] == "start with part1.validation"
    assert "--seed 5" in text


def golden_results() -> dict[str, RunResult]:
    """Fixed runs whose whole rendering is pinned in tests/golden/."""
    part1 = PartResult("part1", "In-place forward", [
        check("part1.validation", "failed", 0.0, 3.0, rank=0,
              message="W has ndim 2: returned normally; expected ValueError",
              hint="Check shapes first and raise ValueError yourself."),
        check("part1.correctness", "failed", 0.0, 6.0, rank=2, message=EVIDENCE, hint=HINT),
        check("part1.returns_p", "passed", 1.0, 1.0),
        check("part1.aliasing", "failed", 0.0, 3.0, rank=2, after=["part1.correctness"],
              message="called with P is W: wrong products"),
    ])
    hung = PartResult("part3", "Hand-written backward", [
        check("part3.validation", "timeout", 0.0, 2.0, message="did not finish within 3 s (an "
              "infinite loop?)\n  it was at exercises/part3_backward.py, line 6: while True:",
              output="backward called: about to loop forever"),
        check("part3.correctness", "skipped", 0.0, 9.0,
              message="not run: part3.validation timed out"),
    ])
    broken = PartResult("part2", "Out-of-place forward", [
        check(f"part2.c{i}", "error", 0.0, 1.0, message="could not import "
              "part2_out_of_place.py:\nSyntaxError: invalid syntax (exercises/"
              "part2_out_of_place.py, line 6)") for i in range(3)])
    stub = PartResult("part4", "Hillis-Steele scan", [
        check(f"part4.c{i}", "failed", 0.0, 1.0, not_implemented=True,
              message="not implemented yet (Part 4)") for i in range(3)])
    timing = PartResult("part4", "Hillis-Steele scan", [
        check("part4.forward", "passed", 7.0, 7.0),
        check("part4.timing", "skipped", 0.0, 0.0, message="no CUDA device: CPU figures for "
              "information\nCPU (cpu), N=512, D=32, float32\n  your scan forward  3.400 ms  "
              "±2% (n=50)"),
    ])
    return {
        "wrong_order": RunResult("prefix-products", "torch", 5, [part1]),
        "hang_broken_stub": RunResult("prefix-products", "numpy", 7, [broken, hung, stub]),
        "figures": RunResult("prefix-products", "torch", 9, [timing]),
    }


@pytest.mark.parametrize("width", [80, 120])
@pytest.mark.parametrize("name", ["wrong_order", "hang_broken_stub", "figures"])
def test_the_whole_scorecard_matches_its_golden_file(name: str, width: int) -> None:
    """The whole rendered text, at a narrow and a wide terminal."""
    console = Console(file=StringIO(), width=width, color_system=None)
    report.render_scorecard(console, golden_results()[name])
    text = console.file.getvalue()  # type: ignore[attr-defined]
    assert matches_golden(f"scorecard-{name}-{width}.txt", text)
    assert all(len(line) <= width for line in text.splitlines())


def test_skipped_checks_read_as_skipped_never_as_passed() -> None:
    text = render(sample())
    memory_row = next(line for line in text.splitlines() if "title of part1.memory" in line)
    assert "– skipped" in memory_row and "passed" not in memory_row
    assert "1 passed, 1 failed, 1 timeout, 2 skipped" in text
    assert "not passing yet" in text
    assert "A skip is not a pass." in flat(text)


def test_a_skip_that_keeps_its_points_is_not_passing() -> None:
    result = sample()
    result.parts = result.parts[:1]
    text = render(result)
    assert "not passing yet" in text and "1 passed, 1 skipped" in text
    assert "Score 2.0/4.0" in text


def test_all_passed_with_a_skip_that_cannot_apply_still_shows_the_skip() -> None:
    result = sample()
    result.parts = result.parts[:1]
    result.parts[0].checks[1].max_score = 0.0
    text = render(result)
    assert "every graded check passed" in text and "1 skipped (not graded here)" in text
    assert "Score 2.0/2.0" in text


def test_printed_output_is_shown_under_its_check_and_trimmed() -> None:
    text = render(sample())
    assert "your code printed:" in text
    assert "debug line 0" in text and f"debug line {report.OUTPUT_LINES - 1}" in text
    assert f"debug line {report.OUTPUT_LINES}" not in text
    assert f"... ({40 - report.OUTPUT_LINES} more lines)" in text


def test_a_hint_followed_by_printed_output_is_repeated_just_above_the_score() -> None:
    """What the code printed (warnings, debug lines) follows the hint in its panel and can
    push it off an 80x24 screen: the likeliest mistake's hint is then named again just above
    the score, even where its panel is the last; a panel without output needs no repeat."""
    only = RunResult(round="prefix-products", flavor="numpy", seed=5, parts=[
        PartResult("part2", "Out-of-place forward", [sample().parts[1].checks[0]])])
    lines = render(only).splitlines()
    assert flat(" ".join(lines[-4:-2])) == f"start with part2.correctness: {HINT}"
    only.parts[0].checks[0].output = ""
    assert "start with" not in render(only)


def test_a_timeout_gets_its_own_panel_and_status() -> None:
    text = render(sample())
    assert "⏱ timeout" in text and "did not finish within 10 s" in text


def test_figures_of_a_passed_or_skipped_check_are_shown_not_hidden_in_its_row() -> None:
    figures = ("no CUDA device: CPU figures for information\nCPU (cpu), N=512, D=32, float32\n"
               "  your scan forward  3.400 ms  ±2% (n=50)   78.5 GFLOP/s")
    result = RunResult("prefix-products", "torch", 1, [PartResult("part4", "Hillis-Steele scan", [
        check("part4.forward", "passed", 2.0, message="one line, no panel"),
        check("part4.timing", "skipped", max_score=0.0, message=figures),
    ])])
    text = render(result)
    assert "─ part4.timing ─" in text
    assert "your scan forward 3.400 ms ±2% (n=50) 78.5 GFLOP/s" in flat(text)
    assert "one line, no panel" not in text and "─ part4.forward ─" not in text


def test_an_untouched_stub_is_one_line_not_a_wall_of_panels() -> None:
    stub = "not implemented yet (Part 1: write prefix_products_out)"
    result = RunResult("prefix-products", "torch", 1, [PartResult("part1", "In-place forward", [
        check(f"part1.c{i}", "failed", message=stub, hint="Fill in the stub.",
              not_implemented=True) for i in range(4)
    ])])
    text = render(result)
    assert "Traceback" not in text
    assert "start here" in text and "exercises/part1_inplace.py is still a stub" in text
    assert text.count("not implemented yet") == 1  # one line for the part, no table of rows
    assert "hint: Fill in the stub." not in text


def test_markup_in_messages_is_printed_literally() -> None:
    result = RunResult("prefix-products", "numpy", 1, [PartResult("part1", "In-place forward", [
        check("part1.correctness", "failed", message="P[i] differs at [bold]W[0][/bold]",
              hint="use P[i - 1] @ W[i]"),
    ])])
    text = render(result)
    assert "P[i] differs at [bold]W[0][/bold]" in text and "use P[i - 1] @ W[i]" in text


def test_no_color_is_respected(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NO_COLOR", "1")
    console = Console(file=StringIO(), width=100, force_terminal=True)
    report.render_scorecard(console, sample())
    text = console.file.getvalue()  # type: ignore[attr-defined]
    assert "\x1b[31m" not in text and "\x1b[32m" not in text  # no red, no green


def test_the_json_rendering_has_the_documented_shape() -> None:
    doc = json.loads(report.render_json(sample()))
    validate_run_json(doc)
    correctness = doc["parts"][1]["checks"][0]
    assert correctness["message"].startswith(EVIDENCE)
    assert "--- your code printed ---\ndebug line 0" in correctness["message"]
    assert doc["parts"][0]["checks"][1]["hint"] is None


def test_the_part_list_and_hints_render_literally() -> None:
    console = Console(file=StringIO(), width=100, color_system=None)
    workspace = Workspace(Path("/ws"), Settings(PREFIX, "numpy"))
    report.render_part_list(console, workspace, {"part2": {"score": 15.0, "max_score": 15.0,
                                                           "full": True,
                                                           "when": "2024-01-01 10:00"}})
    report.render_hint(console, PREFIX.part("part1"), 2, "torch")
    text = console.file.getvalue()  # type: ignore[attr-defined]
    assert "P[i] = W[0] @ ... @ W[i]" in text
    assert "15.0/15.0 full marks" in flat(text) and text.count("not checked yet") == 3
    assert "hint 1/3: nudge" in text and "hint 2/3: approach" in text and "3/3" not in text


BUSY = ("the machine was too busy to judge this (its measurements still disagreed after 5 "
        "rounds): re-run when it is quieter\nyours grows 2.1x faster than the reference's")


def test_an_undecided_check_shows_its_measurements_and_the_points_it_holds_back() -> None:
    """Neither a pass nor a failure: its own status, its evidence in a panel, and a summary
    that says which points wait for a re-run."""
    result = RunResult("prefix-products", "numpy", 5, [PartResult("part3", "Backward by hand", [
        check("part3.correctness", "passed", 4.0, 4.0),
        check("part3.complexity", "undecided", 0.0, 6.0, message=BUSY)])])
    text = render(result)
    row = next(line for line in text.splitlines() if "title of part3.complexity" in line)
    assert "? too busy" in row and "0.0/6.0" in row
    assert "yours grows 2.1x faster than the reference's" in text
    assert ("Score 4.0/10.0 · 1 passed, 1 undecided · the machine was too busy to judge "
            "part3.complexity (6.0 points held back, not lost): re-run when it is quieter"
            in flat(text))
    assert not result.all_passed
    assert json.loads(report.render_json(result))["parts"][0]["checks"][1]["status"] == \
        "undecided"


def test_a_check_undecided_for_want_of_memory_says_so_where_a_busy_one_says_busy() -> None:
    """The machine ran out of memory under one check and was too busy for another: each row
    names its own reason, and the summary names both, each with the points it holds back."""
    short = f"{SHORT_OF_MEMORY}\nthe process running your code was ended by the kernel's " \
        "out-of-memory killer during this check"
    result = RunResult("prefix-products", "numpy", 5, [PartResult("part3", "Backward by hand", [
        check("part3.correctness", "undecided", 0.0, 4.0, message=short),
        check("part3.complexity", "undecided", 0.0, 6.0, message=BUSY)])])
    text = render(result)
    rows = {name: line for line in text.splitlines()
            for name in ("part3.correctness", "part3.complexity") if f"title of {name}" in line}
    assert "? low mem" in rows["part3.correctness"]
    assert "? too busy" in rows["part3.complexity"]
    assert ("Score 0.0/10.0 · 2 undecided · the machine was too busy to judge part3.complexity "
            "(6.0 points held back, not lost): re-run when it is quieter; the machine ran out "
            "of memory judging part3.correctness (4.0 points held back, not lost): re-run with "
            "more memory free" in flat(text))
