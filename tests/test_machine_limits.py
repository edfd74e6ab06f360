"""The machine's own limits. One that refuses a process or a thread for a moment (its process
table, or a container's limit on tasks, full: EAGAIN) is the machine's failure: every start is
tried again (strays.retried), and what still cannot start is said to be so, undecided where it
cost a check its verdict, never a candidate's error, a lost part or a traceback. A shell's low
limit on open files is raised as far as its hard limit allows, and one too low to grade with
is one line."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from grader.runner import strays

from helpers import (
    NO_SANDBOX,
    PREFIX,
    SESSION_ENV,
    process_cap,
    run_grader,
    run_owned,
    run_tiny_sandboxed,
    write_workspace,
)


def _refusing(times: int, exc: BaseException) -> tuple[Callable[[], str], list[int]]:
    """A start refused `times` times with `exc`, then started; and the count of tries."""
    tries = [0]

    def start() -> str:
        tries[0] += 1
        if tries[0] <= times:
            raise exc
        return "started"

    return start, tries


@pytest.mark.parametrize("exc", [BlockingIOError(11, "Resource temporarily unavailable"),
                                 RuntimeError("can't start new thread")])
def test_a_start_the_machine_refuses_for_a_moment_is_tried_again(
        exc: BaseException, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(strays, "FORK_WAITS_S", (0.0, 0.0, 0.0))
    start, tries = _refusing(2, exc)
    assert strays.retried(start) == "started" and tries == [3]
    start, tries = _refusing(10, exc)
    with pytest.raises(strays.NoProcessLeft, match="the process table stayed full"):
        strays.retried(start)
    assert tries == [4]


def test_any_other_failure_to_start_is_not_tried_again() -> None:
    start, tries = _refusing(1, RuntimeError("threads can only be started once"))
    with pytest.raises(RuntimeError, match="only be started once"):
        strays.retried(start)
    assert tries == [1]


def _in_a_full_table(command: list[str], cwd: Path, spare: int) -> tuple[int, str, str]:
    """`command` run in a cgroup with room for its own process and `spare` more (tasks:
    processes and threads), as in a container whose limit on tasks is reached."""
    try:
        cap = process_cap(1 + spare)
        procs = cap.__enter__()
    except OSError as exc:
        pytest.skip(f"no cgroup with a limit on tasks can be made here ({exc})")
    try:
        done = run_owned(command, cwd=cwd, env=SESSION_ENV,
                         preexec_fn=lambda: procs.write_text(str(os.getpid())))
    finally:
        cap.__exit__(None, None, None)
    return done.returncode, done.stdout, done.stderr


def test_a_command_that_cannot_start_its_worker_says_why_in_one_line(tmp_path: Path) -> None:
    """The command's own process and no room for the worker: an error that names the
    machine's limit, exit 1, no traceback (the worker is never started, so this costs no
    torch import)."""
    root = write_workspace(tmp_path / "ws", "numpy", "reference")
    code, out, err = _in_a_full_table([sys.executable, "-m", "grader", "check", "part1",
                                       "--no-sandbox"], root, spare=0)
    assert code == 1
    assert out == ""
    assert err.strip() == "Error: no process could be started: the process table stayed full"


@pytest.mark.slow
@pytest.mark.skipif(bool(NO_SANDBOX), reason=NO_SANDBOX or "")
def test_a_sandbox_the_machine_has_no_process_for_leaves_its_checks_undecided(
        tmp_path: Path) -> None:
    """A worker whose container has no room left for bubblewrap (its limit on tasks set to
    what the worker already has): the part's checks are undecided, saying why (the first
    process the part needs, its baselines' or the sandbox, could not start), and the worker
    goes on to answer the next request."""
    from grader.runner import Request, Worker

    root = write_workspace(tmp_path / "ws", "numpy", "reference")
    request = Request(id="r", root=str(root), round=PREFIX.id, flavor="numpy",
                      parts=["part1"], seed=1, timeout_s=10)
    try:
        cap = process_cap(10_000)
        procs = cap.__enter__()
    except OSError as exc:
        pytest.skip(f"no cgroup with a limit on tasks can be made here ({exc})")
    try:
        with Worker(sandbox=True) as worker:
            procs.write_text(str(worker.process.pid))
            (procs.parent / "pids.max").write_text((procs.parent / "pids.current").read_text())
            result = worker.run(request)
            (procs.parent / "pids.max").write_text("max")
            again = worker.run(request)
    finally:
        cap.__exit__(None, None, None)
    checks = [c for part in result.parts for c in part.checks]
    assert checks and {c.status for c in checks} == {"undecided"}
    assert "no process could be started: the process table stayed full" in checks[0].message
    assert {c.status for part in again.parts for c in part.checks} == {"passed"}


@pytest.mark.slow
@pytest.mark.skipif(bool(NO_SANDBOX), reason=NO_SANDBOX or "")
def test_a_child_its_sandbox_gets_no_process_for_is_the_machines_and_the_sandbox_lives_on(
        tmp_path: Path) -> None:
    """A running sandbox whose container has no room left (its limit on tasks set to what the
    sandbox already has, once its first child is gone): its executor cannot fork the next
    child, with none of the code's processes left to blame, so that child's check is
    undecided, saying why, and the sandbox lives on to run the next check once there is room
    (before, the executor died and the rest of the submission was the code's error)."""
    from grader.checks.base import Measured, Plan, passed
    from grader.engine.results import NOT_SET_UP
    from grader.runner.children import Child, Spawn
    from grader.runner.protocol import ChildJob

    ran = Plan("round:spin", {"seconds": 0.0}, lambda data: passed("ran"))
    plans = [ran, Plan("round:spin", {"seconds": 0.0}, lambda both: passed("measured"),
                       measured=Measured((({},),), least=1)), ran]
    try:
        cap = process_cap(10_000)
        procs = cap.__enter__()
    except OSError as exc:
        pytest.skip(f"no cgroup with a limit on tasks can be made here ({exc})")
    limit = procs.parent / "pids.max"

    def full_for_the_second(spawn: Spawn) -> Spawn:
        started = 0

        def spawned(job: ChildJob) -> Child:
            nonlocal started
            started += 1
            if started == 2:  # the sandbox's processes, all in the capped cgroup, full
                held = [spawn.__self__.current().process.pid]  # type: ignore[attr-defined]
                for pid in held:
                    procs.write_text(str(pid))
                    held.extend(strays.children(pid))
                limit.write_text((procs.parent / "pids.current").read_text())
            elif started == 3:
                limit.write_text("max")
            return spawn(job)

        return spawned

    try:
        results = run_tiny_sandboxed(tmp_path, plans, wrap=full_for_the_second)
    finally:
        cap.__exit__(None, None, None)
    why = "no process could be started: the process table stayed full"
    assert [(r.status, r.message) for r in results] == [
        ("passed", "ran"), ("undecided", NOT_SET_UP.format(why=why)), ("passed", "ran")]


def _with_open_files(soft: int, hard: int) -> Callable[[], None]:
    def limit() -> None:
        import resource

        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))

    return limit


def test_a_low_limit_on_open_files_is_raised_for_the_grading(tmp_path: Path) -> None:
    script = ("import resource\n"
              "from grader.engine.limits import raise_open_files\n"
              "raise_open_files()\n"
              "print(*resource.getrlimit(resource.RLIMIT_NOFILE))\n")
    done = run_owned([sys.executable, "-c", script], cwd=tmp_path, env=SESSION_ENV,
                     preexec_fn=_with_open_files(12, 1024))
    assert done.stdout.split() == ["1024", "1024"], done.stderr


def test_a_limit_on_open_files_too_low_to_grade_with_is_one_line(tmp_path: Path) -> None:
    root = write_workspace(tmp_path / "ws", "numpy", "reference")
    done = run_owned([sys.executable, "-m", "grader", "check", "part1", "--no-sandbox"],
                     cwd=root, env=SESSION_ENV, preexec_fn=_with_open_files(12, 12))
    assert done.returncode == 1
    assert done.stderr.strip() == ("Error: this command may open only 12 files (ulimit -n 12); "
                                   "grading needs at least 64")


LOWERS_ITS_PARENTS = {
    "file size": "resource.prlimit(os.getppid(), resource.RLIMIT_FSIZE, (1 << 20, 1 << 20))",
    # 4 MiB over what the parent maps: a thread's stack no longer fits (part 3 watches its
    # calls with a profiler, whose thread its children start as they set up).
    "address space": ("_vm = next(int(line.split()[1]) for line in open(f'/proc/{os.getppid()}"
                      "/status') if line.startswith('VmSize'))\n"
                      "resource.prlimit(os.getppid(), resource.RLIMIT_AS, "
                      "((_vm << 10) + (4 << 20),) * 2)"),
}


@pytest.mark.parametrize("sandbox", ["--sandbox", "--no-sandbox"])
@pytest.mark.parametrize(("limit", "part"), [
    ("file size", "part1"),
    pytest.param("address space", "part3", marks=pytest.mark.slow),  # timed rounds
])
def test_code_that_lowers_its_parents_limits_gets_its_own_verdicts(
        tmp_path: Path, sandbox: str, limit: str, part: str) -> None:
    """A part whose import lowers, with prlimit, a hard limit of the process that forks its
    children (the worker, or the sandbox's executor): each later child would inherit it and
    fail its own setup, which is never the code's. The parent sets its limits back before each
    fork (as root it can), or, where it cannot (no privilege to raise a hard limit, or the
    parent ran out of room first: a sandbox's executor is then lost), the rest is the code's
    error; a child caps its file size at what it inherited. No check reads as the machine's
    (`undecided`), and the worker never fails."""
    if sandbox == "--sandbox" and NO_SANDBOX:
        pytest.skip(NO_SANDBOX)
    root = write_workspace(tmp_path / "ws", "torch")
    source = root / "exercises" / PREFIX.part(part).file
    source.write_text(f"{source.read_text()}\nimport os, resource\n{LOWERS_ITS_PARENTS[limit]}\n")
    done = run_grader("check", part, "--json", "--seed", "2", sandbox, cwd=root)
    statuses = {c["id"]: (c["status"], c["message"])
                for c in json.loads(done.stdout)["parts"][0]["checks"]}
    assert not [check for check, (status, _) in statuses.items() if status == "undecided"], \
        statuses
    set_back = statuses[f"{part}.correctness"][0] == "passed"  # graded as it is
    assert set_back or any(status == "error" for status, _ in statuses.values()), statuses


def test_a_worker_whose_limits_the_code_changed_for_good_serves_no_one_after(
        grading, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    """Graded in practice mode (`grade --no-sandbox`) by a user who cannot raise a hard limit
    (here root without CAP_SYS_RESOURCE, through util-linux's setpriv), a submission that
    lowers its worker's limit on file size leaves the worker unable to set it back (a child
    forked after it would inherit the lowered limit: that submission's own later checks are
    its error), and the worker retires after it, so the classmate graded next, on the same
    pool, gets a fresh worker and full marks."""
    import shutil
    import subprocess

    import grader.runner
    from grader.runner.pool import RequestDone, WorkerPool

    setpriv = shutil.which("setpriv")
    if setpriv is None:
        pytest.skip("util-linux's setpriv is needed to start a worker without CAP_SYS_RESOURCE")
    popen = subprocess.Popen

    def without_raising_limits(args: list[str], **kwargs: object) -> subprocess.Popen[bytes]:
        return popen([setpriv, "--bounding-set", "-sys_resource", "--", *args], **kwargs)  # type: ignore[call-overload]

    monkeypatch.setattr(grader.runner.subprocess, "Popen", without_raising_limits)
    lowers = write_workspace(tmp_path / "lowers", "numpy")
    source = lowers / "exercises" / PREFIX.part("part1").file
    source.write_text(f"{source.read_text()}\nimport os, resource\n"
                      f"{LOWERS_ITS_PARENTS['file size']}\n")
    classmate = write_workspace(tmp_path / "classmate", "numpy")
    requests = [grading.request(root, "numpy", ["part1"], measured=False)
                for root in (lowers, classmate)]
    with WorkerPool(1) as pool:
        done = {e.request_id: e for e in pool.grade(requests) if isinstance(e, RequestDone)}
    first, second = (done[r.id].result for r in requests)
    assert first is not None and second is not None, done
    assert "undecided" not in [c.status for c in first.parts[0].checks]
    assert second.score == second.max_score, [(c.id, c.status, c.message)
                                              for c in second.parts[0].checks]
