"""One rule for the exit status of every command, run as a user runs the grader: 0 success, 1
checks failed or the operation failed, 2 a usage error (a path given that does not exist
included), 130 on Ctrl-C with the one line "Interrupted." (no traceback, no "Aborted!")."""

from __future__ import annotations

import json
import os
import pty
import select
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from grader.candidate import backups
from grader.engine.workspace import load_workspace

from helpers import PREFIX, SESSION_ENV, Work, finish, run_grader, wait_until, write_workspace

MISSING = "/nonexistent/grader-exit-codes"


@pytest.fixture()
def workspace(tmp_path: Path) -> Path:
    return write_workspace(tmp_path / "ws", "torch", start="stubs")


@pytest.mark.parametrize("args", [
    ["check", "--workspace", MISSING],
    ["list", "--workspace", MISSING],
    ["hint", "part1", "--workspace", MISSING],
    ["reset", "--all", "--yes", "--workspace", MISSING],
    ["backups", "--workspace", MISSING],
    ["restore", "--yes", "--workspace", MISSING],
    ["mock", "status", "--workspace", MISSING],
    ["grade", f"{MISSING}/x"],
    ["report", f"{MISSING}/results.json"],
])
def test_a_path_that_does_not_exist_is_a_usage_error_everywhere(args: list[str],
                                                                 tmp_path: Path) -> None:
    done = run_grader(*args, cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    assert "does not exist" in done.stderr and "Traceback" not in done.stderr


@pytest.mark.parametrize("sandbox", ["--sandbox", "--no-sandbox"])
def test_a_command_started_in_a_deleted_folder_says_so_or_grades_the_workspace_named(
        workspace: Path, tmp_path: Path, sandbox: str) -> None:
    """A shell can stand in a folder deleted under it: `check` started there says so in one
    line, and with `--workspace` grades that workspace as anywhere else (the stubs: exit 1,
    every check of the part failed), in either mode."""
    gone = tmp_path / "gone"
    gone.mkdir()
    in_gone = [sys.executable, "-c", "import os, runpy, sys; os.chdir(sys.argv[1]); "
               "os.rmdir(sys.argv[1]); sys.argv = ['grader', *sys.argv[2:]]; "
               "runpy.run_module('grader', run_name='__main__')", str(gone)]
    lost = subprocess.run([*in_gone, "check", "part1", sandbox], env=SESSION_ENV, cwd=tmp_path,
                          capture_output=True, text=True, timeout=120)
    assert (lost.returncode, lost.stderr) == (1, "Error: the current folder no longer exists "
                                                 "(deleted or moved): cd into your workspace, or "
                                                 "pass --workspace DIR\n")
    gone.mkdir()
    named = subprocess.run([*in_gone, "check", "part1", sandbox, "--json", "--workspace",
                            str(workspace)], env=SESSION_ENV, cwd=tmp_path,
                           capture_output=True, text=True, timeout=120)
    assert named.returncode == 1, named.stderr
    graded = json.loads(named.stdout)
    assert {c["status"] for c in graded["parts"][0]["checks"]} == {"failed"}, named.stdout
    assert graded["score"] == 0 < graded["max_score"]


def test_failed_checks_and_failed_operations_exit_1(workspace: Path) -> None:
    stubs = run_grader("check", "part1", "--no-sandbox", "--seed", "1", "--workspace",
                       workspace, cwd=workspace)
    assert stubs.returncode == 1, stubs.stderr
    no_backup = run_grader("restore", "20990101", "--yes", "--workspace", workspace,
                           cwd=workspace)
    assert no_backup.returncode == 1
    assert no_backup.stderr.startswith("Error: no backups in")


@pytest.mark.parametrize("command", [["reset", "part1"], ["restore"]])
def test_reset_and_restore_both_refuse_without_a_terminal_unless_yes(command: list[str],
                                                                     workspace: Path) -> None:
    target = workspace / "exercises" / PREFIX.part("part1").file
    target.write_text("# earlier work\n")
    assert run_grader("reset", "part1", "--yes", cwd=workspace).returncode == 0
    target.write_text("# my work\n")
    refused = run_grader(*command, cwd=workspace)
    assert refused.returncode == 1
    assert "no terminal to confirm on, so nothing was changed; pass --yes" in refused.stderr
    assert target.read_text() == "# my work\n"
    assert len(backups.list_backups(load_workspace(workspace))) == 1
    done = run_grader(*command, "--yes", cwd=workspace)
    assert done.returncode == 0, done.stderr
    assert target.read_text() != "# my work\n"


def on_a_terminal(args: list[str], cwd: Path, wait_for: bytes,
                  timeout: float = 120) -> tuple[int, str]:
    """Run the grader on a pseudo-terminal, press Ctrl-C once `wait_for` has been shown, and
    return the exit status and everything it wrote. Ctrl-C is pressed again each second until
    the grader ends, as a person would: a signal that lands between Python's check for one and
    the terminal read that `input()` starts is only seen at the next one. `timeout` counts the
    grader's work, not the clock (helpers.Work)."""
    pid, fd = pty.fork()
    if pid == 0:  # the child: the grader, as typed at a shell
        os.chdir(cwd)
        os.execve(sys.executable, [sys.executable, "-m", "grader", *args],
                  {**SESSION_ENV, "TERM": "xterm"})
    shown, pressed, work = b"", 0.0, Work(pid, timeout)
    while not work.spent():
        ready, _, _ = select.select([fd], [], [], 0.2)
        if ready:
            try:
                chunk = os.read(fd, 4096)
            except OSError:  # the child closed the terminal: it has ended
                break
            if not chunk:
                break
            shown += chunk
        if wait_for in shown and time.monotonic() - pressed > 1:
            os.write(fd, b"\x03")  # the terminal turns it into SIGINT for the whole group
            pressed = time.monotonic()
    else:
        os.kill(pid, signal.SIGKILL)
    _, status = os.waitpid(pid, 0)
    os.close(fd)
    return os.waitstatus_to_exitcode(status), shown.decode(errors="replace")


@pytest.mark.slow
def test_ctrl_c_at_a_question_is_interrupted_and_130(workspace: Path) -> None:
    target = workspace / "exercises" / PREFIX.part("part1").file
    target.write_text("# my work\n")
    code, shown = on_a_terminal(["reset", "part1"], workspace, b"[y/N]")
    assert code == 130, shown
    assert shown.rstrip().endswith("Interrupted.")
    assert "Aborted" not in shown and "Traceback" not in shown
    assert target.read_text() == "# my work\n"


@pytest.mark.slow
def test_ctrl_c_while_grading_is_interrupted_and_130(workspace: Path) -> None:
    """Ctrl-C while a check runs the candidate's code (here, code that never returns)."""
    (workspace / "exercises" / PREFIX.part("part2").file).write_text(
        "def prefix_products(W):\n    while True:\n        pass\n")
    code, shown = on_a_terminal(["check", "part2", "--no-sandbox", "--timeout", "60"],
                                workspace, b"grading")
    assert code == 130, shown
    assert shown.rstrip().endswith("Interrupted.")
    assert "Aborted" not in shown and "Traceback" not in shown


def spinning(pid: int) -> bool:
    """Whether a grandchild of `pid` (a child of the grader's worker) has spun for a second:
    the candidate's endless loop, not a reference's quick baseline."""
    from grader.runner import strays

    for child in strays.children(pid):
        for grandchild in strays.children(child):
            usage = strays.tree_usage(grandchild)
            if usage is not None and usage.cpu_s > 1.0:
                return True
    return False


@pytest.mark.slow
def test_the_interrupted_command_leaves_no_process_behind(workspace: Path) -> None:
    """The same Ctrl-C as a shell sends it to the command alone (`kill -INT`), not to its
    group: the grader still stops its children and says so in one line."""
    (workspace / "exercises" / PREFIX.part("part2").file).write_text(
        "def prefix_products(W):\n    while True:\n        pass\n")
    process = subprocess.Popen([sys.executable, "-m", "grader", "check", "part2", "--no-sandbox",
                                "--timeout", "60", "--format", "json"], cwd=workspace,
                               env=SESSION_ENV, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               text=True, start_new_session=True)
    # Interrupted once the candidate's child is there (the CLI, its worker, the child) and
    # spinning.
    wait_until(lambda: spinning(process.pid), process.pid, 60)
    process.send_signal(signal.SIGINT)
    _, stderr = finish(process, 60)
    assert process.returncode == 130, stderr
    assert stderr.strip().splitlines()[-1] == "Interrupted."
    assert "Traceback" not in stderr
    with pytest.raises(ProcessLookupError):
        os.killpg(process.pid, 0)  # no process of its group is left
