"""The mock round as a library: a scripted round on a fake clock, budgets, overtime, hints and
solutions, and the state file surviving a writer that dies mid-write."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from mock_support import T0, FakeClock, edit, make_workspace, result

from grader.candidate import mock
from grader.engine.workspace import Workspace
from grader.render import views


@pytest.fixture
def workspace(tmp_path: Path) -> Workspace:
    return make_workspace(tmp_path / "ws")


def test_scripted_round_gives_exact_report_numbers(workspace: Workspace) -> None:
    clock = FakeClock()
    mock.start_round(workspace, clock())

    edit(workspace, "part1", "# first try\n")
    first = mock.record_check(workspace, result(("part1", 10.0, False)), clock.at(60))
    assert first is not None and first.first_passes == []
    assert first.clock.to_json() == {"elapsed_s": 60.0, "remaining_s": 4440.0,
                                     "overtime": False}

    assert mock.take_hint(workspace, "part1", 3, clock.at(120)) == 1

    edit(workspace, "part1", "# second try\n")
    passing = mock.record_check(workspace, result(("part1", 20.0, True)), clock.at(300))
    assert passing is not None and passing.first_passes == ["part1"]
    assert passing.attempts[0].hints == 1

    assert mock.take_hint(workspace, "part2", 3, clock.at(400)) == 1
    assert mock.take_hint(workspace, "part2", 3, clock.at(410)) == 2
    edit(workspace, "part2", "# part 2\n")
    mock.record_check(workspace, result(("part1", 20.0, True), ("part2", 15.0, True)),
                      clock.at(1000))

    ended = mock.end_round(workspace, clock.at(1500), views.report_markdown)
    assert ended.report.to_json() == {
        "schema_version": 1,
        "round": "prefix-products",
        "elapsed_s": 1500.0,
        "score": 35.0,
        "max_score": 100.0,
        "parts": [
            {"id": "part1", "passed_at_s": 300.0, "attempts": 2, "hints": 1,
             "budget_s": 600.0, "over_budget": False},
            # part 2's clock started at part 1's pass: 700 s against a 600 s budget
            {"id": "part2", "passed_at_s": 1000.0, "attempts": 1, "hints": 2,
             "budget_s": 600.0, "over_budget": True},
            {"id": "part3", "passed_at_s": None, "attempts": 0, "hints": 0,
             "budget_s": 1500.0, "over_budget": False},
            {"id": "part4", "passed_at_s": None, "attempts": 0, "hints": 0,
             "budget_s": 1800.0, "over_budget": False},
        ],
        "followups": [],
    }
    assert json.loads(ended.json_path.read_text()) == ended.report.to_json()
    kept = json.loads((ended.json_path.parent / mock.SESSION).read_text())
    assert mock.MockRound.from_dict(kept) == ended.report.round  # safe from the next round
    markdown = ended.markdown_path.read_text()
    assert "| part2 Out-of-place forward | 16:40 | 11:40 | 10:00 | yes | 1 (1 to pass) | 2 |" \
        in markdown
    assert "- 05:00 part1 check: 20.0/20.0 — first full pass" in markdown
    assert "- 02:00 hint part1 (level 1)" in markdown


def test_attempts_keep_snapshots_and_skip_unchanged_code(workspace: Workspace) -> None:
    clock = FakeClock()
    mock.start_round(workspace, clock())
    stub = mock.record_check(workspace, result(("part1", 0.0, False)), clock.at(10))
    assert stub is not None and stub.attempts == []  # the pristine stub is no attempt

    edit(workspace, "part1", "P = 'mine'\n")
    first = mock.record_check(workspace, result(("part1", 5.0, False)), clock.at(20))
    again = mock.record_check(workspace, result(("part1", 5.0, False)), clock.at(30))
    assert first is not None and len(first.attempts) == 1
    assert again is not None and again.attempts == []  # same code, same score
    rescored = mock.record_check(workspace, result(("part1", 7.0, False)), clock.at(40))
    assert rescored is not None and len(rescored.attempts) == 1  # a dependency changed

    snapshot = workspace.root / first.attempts[0].snapshot
    assert snapshot.read_text() == "P = 'mine'\n"
    assert snapshot.parent.parent == mock.round_dir(workspace, first.round)


def test_no_round_means_nothing_is_recorded(workspace: Workspace) -> None:
    assert mock.record_check(workspace, result(("part1", 1.0, False)), T0) is None
    assert mock.take_hint(workspace, "part1", 3, T0) is None
    assert mock.record_solution(workspace, "part1", True, T0) is False
    assert not mock.mock_dir(workspace).exists()


def test_overtime_is_marked_and_scored_apart(workspace: Workspace) -> None:
    clock = FakeClock()
    round_ = mock.start_round(workspace, clock(), minutes=1)
    assert round_.budgets_s["part1"] == pytest.approx(8.0)  # 10 of 75 minutes, scaled to 1

    edit(workspace, "part1", "# try\n")
    mock.record_check(workspace, result(("part1", 10.0, False)), clock.at(30))
    edit(workspace, "part1", "# late\n")
    late = mock.record_check(workspace, result(("part1", 20.0, True)), clock.at(90))
    assert late is not None and late.attempts[0].overtime
    assert late.clock.to_json() == {"elapsed_s": 90.0, "remaining_s": 0.0, "overtime": True}

    report = mock.end_round(workspace, clock.at(100), views.report_markdown)
    assert report.report.score == 20.0 and report.report.score_at_limit == 10.0
    text = report.markdown_path.read_text()
    assert "overtime: 00:40 past the limit" in text
    assert "overtime +00:40" in views.clock_line(report.report.round, clock()).plain
    assert "| 01:30 (overtime) |" in text


def test_budget_states(workspace: Workspace) -> None:
    clock = FakeClock()
    mock.start_round(workspace, clock())
    states = {p.id: p.budget_state for p in mock.progress(mock.load_round(workspace), T0 + 500)}
    assert states == {"part1": "close", "part2": "not reached", "part3": "not reached",
                      "part4": "not reached"}
    rows = mock.progress(mock.load_round(workspace), T0 + 601)
    assert rows[0].budget_state == "over" and rows[0].over_budget


def test_hints_restart_each_round_and_forced_solutions_count(workspace: Workspace) -> None:
    clock = FakeClock()
    mock.start_round(workspace, clock())
    assert [mock.take_hint(workspace, "part3", 3, clock.at(s)) for s in (1, 2, 3, 4)] == \
        [1, 2, 3, 3]
    first = mock.current_round(workspace)
    assert first is not None and first.hints_for("part3") == 3  # the last one, seen twice
    mock.end_round(workspace, clock.at(10), views.report_markdown)

    mock.start_round(workspace, clock.at(20))
    assert mock.take_hint(workspace, "part3", 3, clock.at(30)) == 1
    assert mock.record_solution(workspace, "part3", True, clock.at(40))
    assert mock.record_solution(workspace, "part3", True, clock.at(45))  # the same, again
    assert mock.record_solution(workspace, "part4", False, clock.at(50))
    round_ = mock.current_round(workspace)
    assert round_ is not None
    assert round_.hints_for("part3") == 2  # one hint level and one forced solution
    assert round_.hints_for("part4") == 0  # a solution after passing is no hint
    markdown = views.report_markdown(mock.build_report(round_, clock()))
    assert "solution part3 (forced, counted as a hint)" in markdown


def test_one_round_at_a_time_and_ending_twice_is_harmless(workspace: Workspace) -> None:
    clock = FakeClock()
    mock.start_round(workspace, clock())
    with pytest.raises(mock.MockError, match="already running"):
        mock.start_round(workspace, clock.at(5))
    first = mock.end_round(workspace, clock.at(60), views.report_markdown)
    again = mock.end_round(workspace, clock.at(600), views.report_markdown)
    assert not first.already and again.already
    assert again.report.to_json() == first.report.to_json()
    with pytest.raises(mock.MockError, match="no mock round"):
        mock.end_round(make_workspace(workspace.root.parent / "other"), T0, views.report_markdown)


def test_concurrent_writers_lose_nothing(workspace: Workspace) -> None:
    mock.start_round(workspace, T0)

    def take_many() -> None:
        for _ in range(15):
            mock.take_hint(workspace, "part1", 3, T0 + 1)

    threads = [threading.Thread(target=take_many) for _ in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    round_ = mock.current_round(workspace)
    assert round_ is not None and len(round_.hints) == 45


KILLED_WRITER = """
import os, sys
from pathlib import Path
from grader.candidate import mock
from grader.engine.workspace import load_workspace

workspace = load_workspace(Path(sys.argv[1]))
os.fsync = lambda fd: os._exit(9)   # die after the temporary file is written, before rename
mock.take_hint(workspace, "part1", 3, float(sys.argv[2]))
"""


def test_a_writer_killed_mid_write_leaves_a_readable_session(workspace: Workspace) -> None:
    mock.start_round(workspace, T0)
    mock.take_hint(workspace, "part2", 3, T0 + 5)
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    killed = subprocess.run([sys.executable, "-c", KILLED_WRITER, str(workspace.root),
                             str(T0 + 10)], env=env, capture_output=True, text=True)
    assert killed.returncode == 9, killed.stderr
    leftovers = list(mock.mock_dir(workspace).glob(".session.json.*.tmp"))
    assert leftovers, "the killed writer should have left its temporary file behind"

    round_ = mock.current_round(workspace)
    assert round_ is not None and [h.part for h in round_.hints] == ["part2"]
    assert mock.take_hint(workspace, "part1", 3, T0 + 20) == 1  # and work goes on
    assert len(mock.current_round(workspace).hints) == 2


def test_a_damaged_session_is_reported_not_ignored(workspace: Workspace) -> None:
    mock.start_round(workspace, T0)
    (mock.mock_dir(workspace) / mock.SESSION).write_text('{"id": "x"')
    with pytest.raises(mock.MockError, match="damaged"):
        mock.load_round(workspace)


@pytest.mark.parametrize(("field", "value", "said"), [
    ("started_at", "x", "started_at should be a number"),
    ("minutes", "75", "minutes should be a number"),
    ("minutes", float("nan"), "its times are not finite positive numbers"),
    ("minutes", 0, "its times are not finite positive numbers"),
    ("parts", "part1", "parts should be a list"),
    ("weights", [], "weights should be an object"),
    ("budgets_s", {}, "a part has no budget or weight"),
    ("ended_at", "now", "ended_at should be a number or null"),
    ("id", "../../../outside", "its id '../../../outside' is not a round's"),
    ("id", "/tmp/elsewhere", "its id '/tmp/elsewhere' is not a round's"),
    ("attempts", [{"at_s": 1}], "attempts[0] has no 'digest'"),
    ("surprise", 1, "has an unknown field 'surprise'"),
])
def test_a_session_edited_into_no_round_is_one_line_and_writes_nowhere(
        workspace: Workspace, field: str, value: object, said: str) -> None:
    """Every field is checked where the file is read: a wrong type, a clock that is no finite
    time, or an id that is no round folder's name (it names where the round's files go) is
    the same one line, and no check, hint or report writes anything because of it."""
    mock.start_round(workspace, T0)
    path = mock.mock_dir(workspace) / mock.SESSION
    data = json.loads(path.read_text())
    data[field] = value
    path.write_text(json.dumps(data))
    for call in (lambda: mock.load_round(workspace),
                 lambda: mock.record_check(workspace, result(("part1", 20.0, True)), T0 + 5),
                 lambda: mock.end_round(workspace, T0 + 9, lambda report: "")):
        with pytest.raises(mock.MockError, match="damaged") as raised:
            call()
        assert said in str(raised.value)
    assert not (workspace.root.parent / "outside").exists()
    assert not Path("/tmp/elsewhere").exists()


def test_a_round_folder_linked_elsewhere_is_never_written(workspace: Workspace,
                                                          tmp_path: Path) -> None:
    """The round's folder replaced by a link (to a folder holding a report.md of someone's):
    recording a check and ending the round refuse it, and write nothing there."""
    round_ = mock.start_round(workspace, T0)
    folder = mock.round_dir(workspace, round_)
    folder.rmdir()
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "report.md").write_text("someone's\n")
    folder.symlink_to(outside)
    edit(workspace, "part1", "# a try\n")
    with pytest.raises(OSError, match="a link where the workspace keeps its state"):
        mock.record_check(workspace, result(("part1", 20.0, True)), T0 + 5)
    with pytest.raises(OSError, match="a link where the workspace keeps its state"):
        mock.end_round(workspace, T0 + 9, lambda report: "")
    assert [p.name for p in outside.iterdir()] == ["report.md"]
    assert (outside / "report.md").read_text() == "someone's\n"


def test_a_file_in_any_encoding_is_kept_as_written(workspace: Workspace) -> None:
    """A part in latin-1 under its coding declaration is snapshotted byte for byte."""
    mock.start_round(workspace, T0)
    written = b"# -*- coding: latin-1 -*-\n# auteur: Ren\xe9\n"
    (workspace.exercises / "part1_inplace.py").write_bytes(written)
    recorded = mock.record_check(workspace, result(("part1", 20.0, True)), T0 + 5)
    assert recorded is not None
    [attempt] = recorded.attempts
    assert (workspace.root / attempt.snapshot).read_bytes() == written
