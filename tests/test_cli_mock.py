"""The rehearsal commands through click's CliRunner: a whole round from `grader mock start` to
the report on a fake clock, the follow-up asked on a (pretend) terminal, solutions, explain,
and the rule that these commands do not import torch unless they need it."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner, Result
from mock_support import FakeClock, edit, make_workspace, result, use_reference

import grader.runner
from grader import cli
from grader.candidate import grading, mock
from grader.engine import state
from grader.engine.prose import topics
from grader.engine.workspace import Workspace
from grader.render import report, views

from helpers import PREFIX, LentWorker, validate_document

REVERSED_ORDER = '''
EXPLANATION = ""

def prefix_products_out(W, P):
    if W.ndim != 3 or W.shape[1] != W.shape[2] or P.shape != W.shape:
        raise ValueError("bad shapes")
    if W.shape[0] == 0:
        return P
    P[0] = W[0]
    for i in range(1, W.shape[0]):
        P[i] = W[i] @ P[i - 1]
    return P
'''
ANSWER = "Autograd saved P[i-1] for backward and my next write bumped its version."


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> FakeClock:
    fake = FakeClock()
    monkeypatch.setattr(mock, "wall_clock", fake)
    return fake


@pytest.fixture
def workspace(tmp_path: Path, request: pytest.FixtureRequest,
              monkeypatch: pytest.MonkeyPatch) -> Workspace:
    """A workspace whose `grader check` runs grade in the session's warm worker."""
    session = request.getfixturevalue("grading")
    monkeypatch.setattr(grader.runner, "Worker", lambda **_: LentWorker(session.worker))
    return make_workspace(tmp_path / "ws")


def run(workspace: Workspace, *args: str, input: str | None = None) -> Result:
    """Invoke the CLI in the workspace, on a console wide enough that lines do not wrap."""
    return CliRunner().invoke(cli.cli, [*args, "--workspace", str(workspace.root)],
                              input=input, catch_exceptions=False, env={"COLUMNS": "200"})


def test_a_whole_round_from_start_to_report(workspace: Workspace, clock: FakeClock,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    started = run(workspace, "mock", "start")
    assert started.exit_code == 0 and "Mock round started: 75:00" in started.output

    edit(workspace, "part1", REVERSED_ORDER)
    clock.at(120)
    failing = run(workspace, "check", "part1", "--json", "--seed", "1")
    assert failing.exit_code == 1
    validate_document(json.loads(failing.output), "check")
    assert json.loads(failing.output)["mock"] == {"elapsed_s": 120.0, "remaining_s": 4380.0,
                                                  "overtime": False}
    clock.at(180)
    assert "part1 hint 1/3" in run(workspace, "hint", "part1").output

    use_reference(workspace.root, "part1")
    clock.at(420)
    monkeypatch.setattr(cli, "someone_can_answer", lambda needs_screen=False: True)
    passing = run(workspace, "check", "part1", "--seed", "1", input=ANSWER + "\n\n")
    assert passing.exit_code == 0, passing.output
    out = passing.output
    assert "mock round · 07:00 elapsed · 68:00 left" in out
    assert "Interviewer's follow-up · part1" in out
    assert "modified by an inplace operation" in out
    assert "the line: exercises/part1_inplace.py" in out
    assert "A model answer" in out and "grader explain version-counter" in out

    clock.at(500)
    assert "✓ passed 07:00" in run(workspace, "mock", "status").output

    clock.at(900)
    ended = run(workspace, "mock", "end", "--json")
    data = json.loads(ended.output)
    validate_document(data, "mock-end")
    assert data["elapsed_s"] == 900.0 and data["score"] == 20.0 and data["max_score"] == 100.0
    assert data["parts"][0] == {"id": "part1", "passed_at_s": 420.0, "attempts": 2,
                                "hints": 1, "budget_s": 600.0, "over_budget": False}
    assert [f["part"] for f in data["followups"]] == ["part1"]
    assert data["followups"][0]["answer"] == ANSWER
    saved = mock.load_round(workspace)
    folder = mock.round_dir(workspace, saved)
    markdown = (folder / "report.md").read_text()
    assert ANSWER in markdown and "The interviewer runs your code:" in markdown
    # where the README says: .grader/mock/<started>/, named for the round's start time
    assert folder.parent == workspace.root / ".grader" / "mock"
    assert re.fullmatch(r"\d{8}-\d{6}", folder.name), folder.name


def test_a_check_that_cannot_save_still_shows_its_scorecard(
        workspace: Workspace, clock: FakeClock, monkeypatch: pytest.MonkeyPatch) -> None:
    """What a check keeps (the scores for `grader list`, the mock round's attempt) is a
    convenience: a full disk is a warning naming the file, under the whole scorecard."""
    use_reference(workspace.root, "part1")
    run(workspace, "mock", "start")
    full = workspace.state_dir / state.LAST_RESULTS

    def no_space(path: Path, data: object) -> None:
        raise OSError(28, "No space left on device", str(path))

    monkeypatch.setattr(state, "write_json_atomic", no_space)
    done = run(workspace, "check", "part1", "--no-sandbox")
    assert done.exit_code == 0, done.output
    assert "Score 20.0/20.0" in done.output
    assert f"the scores were not saved for `grader list`: No space left on device ({full})" \
        in done.output.replace("\n", "")


def test_check_json_gains_mock_only_in_a_round() -> None:
    run_result = result(("part1", 20.0, True))
    assert "mock" not in json.loads(report.render_json(run_result))
    graded = grading.GradingPass(run_result)
    assert graded.mock_json() is None
    with_clock = json.loads(report.render_json(run_result, mock={"elapsed_s": 1.0}))
    assert with_clock["mock"] == {"elapsed_s": 1.0}


def test_starting_over_a_running_round(workspace: Workspace, clock: FakeClock,
                                       monkeypatch: pytest.MonkeyPatch) -> None:
    run(workspace, "mock", "start")
    clock.at(65)
    refused = run(workspace, "mock", "start")
    assert refused.exit_code == 1 and "started 01:05 ago is still running" in refused.output

    monkeypatch.setattr(cli, "someone_can_answer", lambda needs_screen=False: True)
    declined = run(workspace, "mock", "start", input="n\n")
    assert declined.exit_code == 1 and mock.current_round(workspace).started_at == clock.start

    clock.at(70)
    forced = run(workspace, "mock", "start", "--force", "--minutes", "60")
    assert forced.exit_code == 0 and "Ended the running round" in forced.output
    assert "Budgets: part1 08:00, part2 08:00, part3 20:00, part4 24:00" in forced.output
    assert mock.current_round(workspace).started_at == clock.now
    reports = list(mock.mock_dir(workspace).glob("*/report.json"))
    assert len(reports) == 1  # the ended round's report was kept


def test_status_without_and_with_a_round(workspace: Workspace, clock: FakeClock) -> None:
    assert "No mock round is running" in run(workspace, "mock", "status").output
    run(workspace, "mock", "start", "--minutes", "1")
    clock.at(75)
    status = run(workspace, "mock", "status").output
    assert "OVERTIME +00:15" in status
    assert run(workspace, "mock", "end").exit_code == 0
    assert "No mock round is running" in run(workspace, "mock", "status").output


def test_countdown_redraws_until_the_round_ends(workspace: Workspace, clock: FakeClock) -> None:
    mock.start_round(workspace, clock())
    console = views.Console(file=__import__("io").StringIO(), width=100, color_system=None)
    ticks: list[float] = []

    def sleep(seconds: float) -> None:
        ticks.append(seconds)
        clock.advance(seconds)
        if len(ticks) == 3:
            mock.end_round(workspace, clock(), views.report_markdown)

    views.countdown(console, lambda: mock.current_round(workspace), clock, sleep)
    assert ticks == [1.0, 1.0, 1.0]
    assert "The round has ended" in console.file.getvalue()


def test_solution_only_after_passing_or_forced(workspace: Workspace, clock: FakeClock) -> None:
    refused = run(workspace, "solution", "part3")
    assert refused.exit_code == 1 and "has not been checked yet" in refused.output

    state.record_results(workspace, result(("part3", 10.0, False)))
    refused = run(workspace, "solution", "part3")
    assert "your last check scored 10.0/35.0" in refused.output

    run(workspace, "mock", "start")
    forced = run(workspace, "solution", "part3", "--force")
    assert forced.exit_code == 0 and "prefix_products_backward" in forced.output
    assert "Shown with --force" in forced.output
    assert mock.current_round(workspace).hints_for("part3") == 1

    state.record_results(workspace, result(("part3", 35.0, True)))
    shown = run(workspace, "solution", "part3")
    assert shown.exit_code == 0 and "Shown with --force" not in shown.output
    assert mock.current_round(workspace).hints_for("part3") == 1


def test_explain_lists_topics_and_runs_a_live_demo() -> None:
    listing = CliRunner().invoke(cli.cli, ["explain"])
    assert listing.exit_code == 0
    assert all(name in listing.output for name in topics(PREFIX))

    shown = CliRunner().invoke(cli.cli, ["explain", "version-counter"])
    assert shown.exit_code == 0
    assert "is at version 4; expected version 3" in shown.output  # torch, live

    quiet = CliRunner().invoke(cli.cli, ["explain", "hillis-steele", "--no-demo"])
    assert quiet.exit_code == 0 and "step 1:" not in quiet.output
    assert CliRunner().invoke(cli.cli, ["explain", "nonsense"]).exit_code == 2


@pytest.mark.parametrize("command", [["mock", "start"], ["mock", "status"], ["mock", "end"],
                                     ["solution"], ["explain"], ["watch"]])
def test_every_new_command_has_help(command: list[str]) -> None:
    shown = CliRunner().invoke(cli.cli, [*command, "--help"])
    assert shown.exit_code == 0 and len(shown.output.splitlines()) > 4


LIGHT_COMMANDS = """
import sys
from click.testing import CliRunner
from grader.cli import cli
for args in (["mock", "start"], ["mock", "status"], ["hint", "part1"], ["explain"],
             ["explain", "gradcheck", "--no-demo"], ["mock", "end", "--json"]):
    result = CliRunner().invoke(cli, [*args, "--workspace", sys.argv[1]] if args[0] != "explain"
                                else args)
    assert result.exit_code == 0, (args, result.output)
print(sorted(m for m in ("torch", "numpy") if m in sys.modules))
"""


def test_round_commands_do_not_import_torch(workspace: Workspace) -> None:
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    done = subprocess.run([sys.executable, "-c", LIGHT_COMMANDS, str(workspace.root)],
                          env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"
