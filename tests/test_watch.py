"""Watch mode: the loop over change batches, the real watcher reacting to a file write, and
`grader watch` re-grading on a change while a mock round's clock runs."""

from __future__ import annotations

import shutil
import threading
from pathlib import Path

import pytest
from click.testing import CliRunner
from mock_support import FakeClock, make_workspace
from watchfiles import Change

from grader import cli
from grader.candidate import mock, watch


def test_loop_runs_on_exercise_files_and_idles_on_the_rest() -> None:
    batches = [
        set(),
        {(Change.modified, "/ws/exercises/part1_inplace.py")},
        {(Change.added, "/ws/exercises/__pycache__/part1_inplace.cpython-311.pyc"),
         (Change.modified, "/ws/exercises/.part2.py.swp")},
        {(Change.modified, "/ws/exercises/part2_out_of_place.py"),
         (Change.modified, "/ws/exercises/part3_backward.py")},
        {(Change.modified, "/ws/exercises/part4_scan.py")},
    ]
    changes: list[list[str]] = []
    idles: list[None] = []
    runs = watch.watch_loop(batches, changes.append, lambda: idles.append(None), max_runs=2)
    assert runs == 2 and len(idles) == 2
    assert changes == [["/ws/exercises/part1_inplace.py"],
                       ["/ws/exercises/part2_out_of_place.py", "/ws/exercises/part3_backward.py"]]


def test_a_file_the_checked_code_writes_itself_starts_no_check(tmp_path: Path) -> None:
    """A part that appends to its own file at import would have every check start the next:
    a change heard after a check, of a file that holds what it held as the check ended, was
    the check's own; a save after it (new contents) starts the next check."""
    exercises = tmp_path / "exercises"
    exercises.mkdir()
    part = exercises / "part2_out_of_place.py"
    part.write_text("# mine\n")
    path = str(part.resolve())
    heard = [{(Change.modified, path)}, {(Change.modified, path)}, set(),
             {(Change.modified, path)}, {(Change.modified, path)}]
    saves = iter([None, None, None, "# saved again\n", None])

    def batches():  # a save (or none) lands before each batch is heard
        for batch in heard:
            text = next(saves)
            if text is not None:
                part.write_text(text)
            yield batch

    checks: list[list[str]] = []

    def check(changed: list[str]) -> None:  # the code under test appends to its own file
        checks.append(changed)
        part.write_text(part.read_text() + "# touched\n")

    runs = watch.watch_loop(batches(), check, folder=exercises)
    assert runs == 2 and checks == [[path], [path]]


def test_the_real_watcher_reacts_to_a_file_write(tmp_path: Path) -> None:
    (tmp_path / "exercises").mkdir()
    target = tmp_path / "exercises" / "part1_inplace.py"
    target.write_text("# before\n")
    stop = threading.Event()
    guard = threading.Timer(30, stop.set)  # a broken watcher fails the test, never hangs it
    guard.start()
    written: list[bool] = []

    def write_once() -> None:  # the first quiet tick proves the watcher is up: now save
        if not written:
            target.write_text("# after\n")
            written.append(True)

    seen: list[list[str]] = []
    try:
        runs = watch.watch_loop(watch.exercise_changes(tmp_path / "exercises", stop,
                                                       debounce_ms=50, tick_ms=100),
                                seen.append, write_once, max_runs=1)
    finally:
        guard.cancel()
    assert runs == 1 and not stop.is_set()
    assert seen == [[str(target)]]


def test_a_folder_replaced_by_another_of_its_name_is_watched_as_the_new_one(
        tmp_path: Path) -> None:
    """git checkout, or an editor that saves by renaming, swaps the folder: saves in the new
    one are seen, and the old one, moved aside, is not watched."""
    exercises = tmp_path / "exercises"
    exercises.mkdir()
    target = exercises / "part1_inplace.py"
    target.write_text("# before\n")
    stop = threading.Event()
    guard = threading.Timer(30, stop.set)  # a broken watcher fails the test, never hangs it
    guard.start()
    steps = [lambda: (exercises.rename(tmp_path / "old"),
                      shutil.copytree(tmp_path / "old", exercises)),
             lambda: (tmp_path / "old" / "part1_inplace.py").write_text("# old\n")]
    found: list[bool] = []

    def next_step() -> None:  # one step per quiet tick; then save in the new folder
        if steps:
            steps.pop(0)()
        else:
            target.write_text("# after\n")

    def changed(batch: list[str]) -> None:
        assert all(Path(p).is_relative_to(exercises) for p in batch), batch
        if not steps and str(target) in batch and target.read_text() == "# after\n":
            found.append(True)
            stop.set()

    try:
        watch.watch_loop(watch.exercise_changes(exercises, stop, debounce_ms=50, tick_ms=100),
                         changed, next_step)
    finally:
        guard.cancel()
    assert found


def test_grader_watch_regrades_on_save_and_shows_the_clock(
        runner: CliRunner, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    workspace = make_workspace(tmp_path / "ws", solved=("part2",))
    clock = FakeClock()
    monkeypatch.setattr(mock, "wall_clock", clock)
    mock.start_round(workspace, clock())
    saved = str(workspace.exercises / "part2_out_of_place.py")

    def scripted(folder: Path) -> object:
        assert folder == workspace.exercises
        clock.at(90)
        yield set()
        clock.at(200)
        yield {(Change.modified, saved)}
        raise KeyboardInterrupt  # the candidate presses Ctrl-C

    monkeypatch.setattr(watch, "exercise_changes", scripted)
    done = runner.invoke(cli.cli, ["watch", "part2", "--seed", "3", "--workspace",
                                   str(workspace.root)], env={"COLUMNS": "200"})
    assert done.exit_code == 0, done.output
    out = done.output
    assert out.count("part2 · Out-of-place forward") == 2  # graded at start and on the save
    assert "changed: part2_out_of_place.py" in out
    assert "mock round · 03:20 elapsed" in out
    assert out.rstrip().endswith("Stopped watching.")
    round_ = mock.current_round(workspace)
    assert round_ is not None and [a.part for a in round_.attempts] == ["part2"]
    assert round_.followups[0].part == "part2" and round_.followups[0].skipped


def test_grader_watch_grades_nothing_while_exercises_is_gone(
        runner: CliRunner, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A folder moved aside is no set of stubs: watch says it is not there and grades nothing
    until it is back."""
    workspace = make_workspace(tmp_path / "ws", solved=("part2",))
    saved = str(workspace.exercises / "part2_out_of_place.py")

    def scripted(folder: Path) -> object:
        folder.rename(tmp_path / "aside")
        yield {(Change.deleted, saved)}
        (tmp_path / "aside").rename(folder)
        yield {(Change.added, saved)}
        raise KeyboardInterrupt

    monkeypatch.setattr(watch, "exercise_changes", scripted)
    done = runner.invoke(cli.cli, ["watch", "part2", "--seed", "3", "--workspace",
                                   str(workspace.root)], env={"COLUMNS": "200"})
    assert done.exit_code == 0, done.output
    assert "exercises/ is not there: nothing graded until it is back" in done.output
    assert done.output.count("part2 · Out-of-place forward") == 2  # at start, and once back
