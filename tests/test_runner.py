"""The runner beyond what a status shows: one worker answering many requests, a grader-side
failure that must not take the worker down, and candidate files always graded as they are on
disk now."""

from __future__ import annotations

import json
import os
import pickle
import platform
import py_compile
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from tiny_round import write_tiny_round

from grader.checks.base import Check, Context, Measured, Plan, Verdict, passed, undecided
from grader.checks.table import measured_checks, round_checks
from grader.coach.selfcheck import write_exercises
from grader.engine.results import POINT_UNITS, CheckResult
from grader.engine.rounds import Round, installed
from grader.probes.autograd import autodiff_watch
from grader.runner import GraderCrash, Request, memory, strays
from grader.runner import worker as worker_module
from grader.runner.children import Spawn, fork_spawner
from grader.runner.worker import (
    DEVICE_SETUP_S,
    _Part,
    device_ready,
    device_turn,
    frame_timeout,
    run_part,
)

from helpers import (
    NO_SANDBOX,
    PREFIX,
    SESSION_ENV,
    SPAWNING,
    TEST_SEED,
    adopting,
    checks_by_id,
    memory_cap,
    needing_the_grading_environment,
    run_grader,
    run_owned,
    spinning,
    wait_until,
    write_part1_that_first_runs,
    write_workspace,
)


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> Round:
    """A round whose probes.py holds this module's probes."""
    return Round.load(write_tiny_round(tmp_path_factory.mktemp("rounds")))


def test_a_grader_failure_is_reported_and_the_worker_goes_on(grading, tmp_path: Path) -> None:
    root = write_workspace(tmp_path / "ws", "numpy")
    with pytest.raises(GraderCrash, match="no part 'part9'"):
        grading.worker.run(Request(id="bad", root=str(root), round=PREFIX.id, flavor="numpy",
                                   parts=["part9"], seed=1))
    result = grading.run(root, "numpy", ["part1"])
    assert result.parts[0].passed


def test_each_request_sees_the_files_as_they_are_now(grading, tmp_path: Path) -> None:
    """Same size, same mtime, a bytecode cache of the old text beside it: still graded fresh.

    Python's bytecode cache trusts (mtime in whole seconds, size); an edit that keeps both (or
    another submission copied over with its timestamps) must not be graded as the old code.
    """
    root = write_workspace(tmp_path / "ws", "numpy")
    part1 = root / "exercises" / "part1_inplace.py"
    right = part1.read_text()
    wrong = right.replace("P[i] = P[i - 1] @ W[i]", "P[i] = W[i] @ P[i - 1]")
    assert wrong != right and len(wrong) == len(right)
    part1.write_text(wrong)
    py_compile.compile(str(part1), doraise=True)
    stamp = part1.stat().st_mtime
    assert checks_by_id(grading.run(root, "numpy", ["part1"]))["part1.correctness"].status \
        == "failed"
    part1.write_text(right)
    os.utime(part1, (stamp, stamp))
    assert checks_by_id(grading.run(root, "numpy", ["part1"]))["part1.correctness"].status \
        == "passed"


def _cap_report(capped: bool) -> Verdict:
    return passed("capped" if capped else "uncapped")


def _run_plans_here(tiny: Round, root: Path, plans: list[Plan], ready: bool,
                    timeout_s: float = 10.0, spawn: Spawn | None = None) -> list[CheckResult]:
    """Run plans through the real runner from this process (forked children, real limits),
    made ready as the worker is before it forks (the autograd watch made once)."""
    autodiff_watch()
    checks = [Check(f"part1.plan{i}", f"plan {i}", 1.0, lambda ctx, plan=plan: plan, ("numpy",))
              for i, plan in enumerate(plans)]
    request = Request(id="device", root=str(root), round=tiny.id, flavor="numpy",
                      parts=["part1"], seed=1, timeout_s=timeout_s)
    grading = _Part(request, tiny, tiny.part("part1"), checks,
                    [Context(1, "numpy", c.id) for c in checks], plans,
                    spawn or fork_spawner(tiny))
    grading.ready = ready
    grading.idle = grading.idle_budget()  # the part's allowance of sleep follows `ready`
    with adopting():
        return run_part(grading)


def test_a_failure_that_follows_from_another_is_not_diagnosed_again(tiny: Round,
                                                                    tmp_path: Path) -> None:
    """A failure whose check's row names in `after` a check that already failed is folded
    under it on the scorecard (engine.triage), whose hint names the slip: its own diagnosis
    (the reference's mutants on its own cases) is not run. One that stands alone, or follows a
    check that passed, is diagnosed as ever."""
    from grader.checks.base import Diagnosis

    named: list[str] = []

    def failing(check_id: str, alone: bool = False) -> Plan:
        naming = Diagnosis("round:spin_grid", ({"rows": [1], "columns": [2], "seconds": 0.0},),
                           ("rows", "columns"),
                           lambda seen: named.append(check_id) or f"{check_id}'s slip")
        return Plan("round:spin", {"seconds": 0.0},
                    lambda data: Verdict("failed", "wrong", "The hint.", diagnosis=naming,
                                         alone=alone))

    rows = [("passes", Plan("round:spin", {"seconds": 0.0}, lambda data: passed("right")), ()),
            ("root", failing("root"), ()),
            ("follows", failing("follows"), ("part1.root",)),
            ("alone", failing("alone", alone=True), ("part1.root",)),
            ("after_a_pass", failing("after_a_pass"), ("part1.passes",))]
    checks = [Check(f"part1.{name}", name, 1.0, lambda ctx, plan=plan: plan, ("numpy",),
                    after=after) for name, plan, after in rows]
    request = Request(id="t", root=str(write_workspace(tmp_path / "ws", "numpy", round_=tiny)),
                      round=tiny.id, flavor="numpy", parts=["part1"], seed=1)
    grading = _Part(request, tiny, tiny.part("part1"), checks,
                    [Context(1, "numpy", c.id) for c in checks], [plan for _, plan, _ in rows],
                    fork_spawner(tiny))
    hints = {r.id: r.hint for r in run_part(grading)}
    assert named == ["root", "alone", "after_a_pass"]
    assert hints == {"part1.passes": None, "part1.root": "root's slip",
                     "part1.follows": "Fix part1.root first: this failure follows from it "
                     "(what this check measures supposes what part1.root checks is right). "
                     "The hint.", "part1.alone": "alone's slip",
                     "part1.after_a_pass": "after_a_pass's slip"}


def test_a_fork_refused_for_want_of_processes_is_tried_again(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """EAGAIN (the machine's process table full for a moment, as while a sweep kills a fork
    loop's strays) is waited out, FORK_WAITS_S apart; past them it is NoProcessLeft."""
    waits: list[float] = []
    refusals = iter([True, True, False])

    def fork() -> int:
        if next(refusals):
            raise BlockingIOError(11, "Resource temporarily unavailable")
        return 4242

    monkeypatch.setattr(strays.os, "fork", fork)
    monkeypatch.setattr(strays.time, "sleep", waits.append)
    assert strays.fork() == 4242
    assert waits == list(strays.FORK_WAITS_S[:2])
    refusals = iter(lambda: True, None)
    with pytest.raises(strays.NoProcessLeft):
        strays.fork()
    assert waits[2:] == list(strays.FORK_WAITS_S)


def test_a_part_whose_children_cannot_be_forked_is_undecided_not_failed(
        tiny: Round, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A machine out of processes is no fact about the code: the part's checks are held for a
    re-run, the worker goes on, and no descriptor is left open."""
    def refused() -> int:
        raise BlockingIOError(11, "Resource temporarily unavailable")

    monkeypatch.setattr(strays.os, "fork", refused)
    monkeypatch.setattr(strays.time, "sleep", lambda seconds: None)
    plan = Plan("round:spin", {"seconds": 0.0}, lambda data: passed("right"))
    checks = [Check(f"part1.c{i}", f"c{i}", 1.0, lambda ctx: plan, ("numpy",))
              for i in range(2)]
    request = Request(id="t", root=str(write_workspace(tmp_path / "ws", "numpy", round_=tiny)),
                      round=tiny.id, flavor="numpy", parts=["part1"], seed=1)
    grading = _Part(request, tiny, tiny.part("part1"), checks,
                    [Context(1, "numpy", c.id) for c in checks], [plan, plan],
                    fork_spawner(tiny))
    open_before = len(os.listdir("/proc/self/fd"))
    results = run_part(grading)
    assert [r.status for r in results] == ["undecided", "undecided"]
    assert all(r.score == 0 and "too busy" in r.message and "process table" in r.message
               for r in results), [r.message for r in results]
    assert len(os.listdir("/proc/self/fd")) == open_before
    # Where what fills the table is what the code under test left behind (strays that
    # outlived the sweeps), it is the code's doing: an error, not held points.
    monkeypatch.setattr(strays, "_adopting", True)
    monkeypatch.setattr(strays, "children", lambda pid=None: {999999})
    monkeypatch.setattr(strays, "kill_all", lambda: None)
    left = run_part(_Part(request, tiny, tiny.part("part1"), checks,
                          [Context(1, "numpy", c.id) for c in checks], [plan, plan],
                          fork_spawner(tiny)))
    assert [r.status for r in left] == ["error", "error"]
    assert all("left behind" in r.message for r in left), [r.message for r in left]
    # Nor where its limit on processes is not what it started with (code under test, the
    # same user, can lower it with prlimit).
    monkeypatch.setattr(strays, "children", lambda pid=None: set())
    monkeypatch.setattr(strays, "_PROCESS_LIMIT", (1, 1))
    lowered = run_part(_Part(request, tiny, tiny.part("part1"), checks,
                             [Context(1, "numpy", c.id) for c in checks], [plan, plan],
                             fork_spawner(tiny)))
    assert [r.status for r in lowered] == ["error", "error"]
    assert all("limit on processes was lowered" in r.message for r in lowered)


CAPPED = Plan("round:address_space_capped", {}, _cap_report)
CAPPED_ON_DEVICE = Plan("round:address_space_capped", {}, _cap_report, uses_device=True)


def test_a_probe_that_uses_the_device_runs_without_the_address_space_cap(
        tiny: Round, tmp_path: Path) -> None:
    """cuInit reserves tens of GB of address space and fails under the memory cap, so a probe
    that sets up CUDA must run uncapped, but only that probe (in a child of its own) and only
    when CUDA is there."""
    root = write_workspace(tmp_path / "ws", "numpy", round_=tiny)
    plans = [CAPPED, CAPPED_ON_DEVICE, CAPPED]
    with_cuda = [r.message for r in _run_plans_here(tiny, root, plans, ready=True)]
    assert with_cuda == ["capped", "uncapped", "capped"]
    without = [r.message for r in _run_plans_here(tiny, root, plans, ready=False)]
    assert without == ["capped", "capped", "capped"]


def test_the_address_space_cap_is_a_hard_limit(tiny: Round, tmp_path: Path) -> None:
    """The code under test cannot lift its own cap: soft and hard limits are the same."""
    root = write_workspace(tmp_path / "ws", "numpy", round_=tiny)
    plan = Plan("round:raise_address_space_cap", {}, _cap_report)
    (result,) = _run_plans_here(tiny, root, [plan], ready=False)
    assert result.message == "capped"


def test_a_probe_that_uses_the_device_gets_time_to_set_it_up(tiny: Round,
                                                              tmp_path: Path) -> None:
    root = write_workspace(tmp_path / "ws", "numpy", round_=tiny)
    device_plan = Plan("round:slow", {"seconds": 0.8}, _cap_report, uses_device=True)
    (ready,) = _run_plans_here(tiny, root, [device_plan], ready=True, timeout_s=0.3)
    assert ready.status == "passed", ready.message
    (absent,) = _run_plans_here(tiny, root, [device_plan], ready=False, timeout_s=0.3)
    assert absent.status == "timeout"
    assert "sat idle for 0.3 s" in absent.message
    request = Request(id="t", root=str(root), round=tiny.id, flavor="numpy", parts=["part1"],
                      seed=1, timeout_s=4.0)
    assert frame_timeout(request, device_plan, True) == 4.0 + DEVICE_SETUP_S
    assert frame_timeout(request, CAPPED, True) == 4.0


def test_the_device_is_used_only_for_torch_without_device_cpu(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    import torch

    def request(flavor: str, device: str) -> Request:
        return Request(id="t", root=str(tmp_path), round=PREFIX.id, flavor=flavor,
                       parts=["part4"], seed=1, device=device)

    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    assert device_ready(request("torch", "auto"), [CAPPED_ON_DEVICE])
    assert device_ready(request("torch", "cuda"), [CAPPED_ON_DEVICE])
    assert not device_ready(request("torch", "auto"), [CAPPED])
    assert not device_ready(request("torch", "cpu"), [CAPPED_ON_DEVICE])
    assert not device_ready(request("numpy", "auto"), [CAPPED_ON_DEVICE])
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    assert not device_ready(request("torch", "cuda"), [CAPPED_ON_DEVICE])


def _try_device_lock() -> int:
    """Exit status of another process taking the device lock without waiting (0: it got it)."""
    code = ("import fcntl, os, sys\nfd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT)\n"
            "fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)")
    return subprocess.run([sys.executable, "-c", code, str(worker_module.DEVICE_LOCK)],
                           capture_output=True).returncode


def test_one_grading_process_at_a_time_times_on_the_device(
        tiny: Round, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """(On a lock file of its own: the suite's other processes take the real one meanwhile.)"""
    monkeypatch.setattr(worker_module, "DEVICE_LOCK", tmp_path / "device.lock")
    with device_turn(True):
        assert _try_device_lock() != 0
    assert _try_device_lock() == 0
    with device_turn(False):
        assert _try_device_lock() == 0
    # A child forked during the turn does not keep it once the worker gives it back.
    root = write_workspace(tmp_path / "ws", "numpy", round_=tiny)
    request = Request(id="t", root=str(root), round=tiny.id, flavor="numpy", parts=["part1"],
                      seed=1)
    with device_turn(True):
        slow = _Part(request, tiny, tiny.part("part1"), [], [],
                     [Plan("round:slow", {"seconds": 5}, _cap_report)], fork_spawner(tiny))
        child = slow.spawn(slow.job(0, 1))
    try:
        assert _try_device_lock() == 0
    finally:
        child.end(kill=True)


def _runs_report(data: dict) -> Verdict:  # type: ignore[type-arg]
    (runs,) = data["yours"]
    return passed(" ".join(f"{run['data']}:{run['cpu_s']:.2f}" for run in runs))


def test_a_plan_measured_run_by_run_gets_each_processs_cpu_time_from_the_kernel(
        tiny: Round, tmp_path: Path) -> None:
    """Each run is a process of its own; its CPU time is what wait4 reports."""
    root = write_workspace(tmp_path / "ws", "numpy", round_=tiny)
    runs = ({"seconds": 0.05}, {"seconds": 0.4})
    plan = Plan("round:spin", {}, _runs_report, measured=Measured((runs,), least=1))
    (result,) = _run_plans_here(tiny, root, [plan], ready=False)
    figures = [(kind, float(cpu)) for kind, cpu in
               (item.split(":") for item in result.message.split())]
    assert [kind for kind, _ in figures] == ["spun", "spun"]
    assert figures[0][1] < 0.3 < 0.35 <= figures[1][1] < 1.5


def test_a_child_stopped_from_outside_is_continued_at_the_next_look(tiny: Round,
                                                                    tmp_path: Path) -> None:
    """Each child this test forks is stopped (SIGSTOP) soon after it starts and never continued
    by the one who stopped it: a person's `kill -STOP`, a tool that pauses processes. The
    grader continues its child at its next look, so a check whose limit (1 s of sleep) is far
    shorter than the stop meant to last passes with its quiet verdict."""
    root = write_workspace(tmp_path / "ws", "numpy", round_=tiny)
    before = strays.children(os.getpid())
    halt, stopped = threading.Event(), set()

    def stop_each_new_child() -> None:
        while not halt.wait(0.01):
            for pid in strays.children(os.getpid()) - before - stopped:
                os.kill(pid, signal.SIGSTOP)
                stopped.add(pid)

    stopper = threading.Thread(target=stop_each_new_child, daemon=True)
    stopper.start()
    try:
        plans = [Plan("round:spin", {"seconds": 0.2}, lambda data: passed(data))] * 3
        results = _run_plans_here(tiny, root, plans, ready=False, timeout_s=1.0)
    finally:
        halt.set()
        stopper.join()
    assert stopped, "no child was ever stopped: nothing was tested"
    assert [(r.status, r.message) for r in results] == [("passed", "spun")] * 3


@pytest.mark.parametrize(("ending", "outcomes"), [
    ("killed", [("error", "the process importing part1_sum.py killed by signal SIGKILL")] * 2),
    ("stalled", [("timeout", "importing part1_sum.py sat idle for 1 s (sleeping or waiting at "
                             "module level?)"),
                 ("skipped", "not run: importing the part timed out")]),
])
def test_a_child_ended_before_its_setup_beside_the_codes_strays_is_the_codes_doing(
        tiny: Round, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, ending: str,
        outcomes: list[tuple[str, str]]) -> None:
    """Where processes the code under test left behind outlived the sweeps (a fork loop racing
    them), a child that ends or stalls before its setup may have been ended or held by them:
    its check is the code's error or timeout, not the machine's undecided."""
    from grader.runner import child as child_module

    root = write_workspace(tmp_path / "ws", "numpy", round_=tiny)
    once = tmp_path / "ended once"
    line = ENDINGS[ending][0]
    monkeypatch.setattr(strays, "strays_left", lambda: True)
    monkeypatch.setattr(child_module, "first_for_the_killer",
                        lambda: once.exists() or once.touch() or exec(line))
    plans = [Plan("round:spin", {"seconds": 0.0}, lambda data: passed("ran"))] * 2
    results = _run_plans_here(tiny, root, plans, ready=False, timeout_s=1.0)
    assert [(r.status, r.message) for r in results] == outcomes


def _freezer(name: str) -> tuple[Path, Callable[[bool], None]]:
    """A freezer cgroup made for this test (v1's freezer hierarchy, else v2's) and a way to
    freeze or thaw it; OSError where none can be made (not root, no freezer)."""
    v1 = Path("/sys/fs/cgroup/freezer")
    folder = (v1 if v1.is_dir() else Path("/sys/fs/cgroup")) / name
    folder.mkdir()
    if v1.is_dir():
        return folder, lambda frozen: (folder / "freezer.state").write_text(
            "FROZEN" if frozen else "THAWED")
    return folder, lambda frozen: (folder / "cgroup.freeze").write_text("1" if frozen else "0")


def test_a_child_its_cgroups_freezer_holds_is_waited_for_not_taken_for_asleep(
        tiny: Round, tmp_path: Path) -> None:
    """A child frozen with its cgroup (a container paused, a unit frozen by systemd) shows as
    asleep in /proc, yet it is the machine that keeps it from running: it is waited for as a
    starved one is, and a check whose limit (1 s of sleep) is shorter than the freeze (3 s)
    keeps its quiet verdict."""
    try:
        folder, freeze = _freezer(f"grader-test-{os.getpid()}")
    except OSError as exc:
        pytest.skip(f"no freezer cgroup can be made here ({exc})")
    root = write_workspace(tmp_path / "ws", "numpy", round_=tiny)
    before = strays.children(os.getpid())
    frozen: list[int] = []

    def freeze_the_first_child() -> None:
        while not frozen:
            for pid in strays.children(os.getpid()) - before:
                (folder / "cgroup.procs").write_text(str(pid))
                freeze(True)
                frozen.append(pid)
                time.sleep(3.0)
                freeze(False)
                return
            time.sleep(0.01)

    freezer = threading.Thread(target=freeze_the_first_child, daemon=True)
    freezer.start()
    try:
        plan = Plan("round:spin", {"seconds": 0.2}, lambda data: passed(data))
        (result,) = _run_plans_here(tiny, root, [plan], ready=False, timeout_s=1.0)
    finally:
        freezer.join()
        folder.rmdir()
    assert frozen, "no child was ever frozen: nothing was tested"
    assert (result.status, result.message) == ("passed", "spun")


@pytest.mark.parametrize(("times", "status"), [(2, "passed"), (100_000, "timeout")])
def test_code_that_stops_itself_is_continued_yet_spends_its_sleep(
        tiny: Round, tmp_path: Path, times: int, status: str) -> None:
    """Code that stops itself is continued like any stopped child, and each stop counts as
    sleep up to the look that ends it: a couple of stops cost a look each, and code that stops
    itself without end times out as idle code does."""
    root = write_workspace(tmp_path / "ws", "numpy", round_=tiny)
    plan = Plan("round:stop_self", {"times": times}, lambda data: passed(data))
    (result,) = _run_plans_here(tiny, root, [plan], ready=False, timeout_s=1.0)
    assert result.status == status, result
    assert result.message == ("woke" if status == "passed" else
                              "sat idle for 1 s (sleeping or waiting, not computing); the rest "
                              "of this part was not run")


READS_ITS_CHILD = """\
import os, subprocess, sys
from grader.runner import strays
os.nice(7)
child = subprocess.Popen([sys.executable, "-c", "while True: pass"])
try:
    print(strays.tree_usage(child.pid).runnable)
finally:
    child.kill()
"""


def test_a_process_that_lowered_its_own_priority_is_not_counted_as_kept_from_running() -> None:
    """A spinning process at the reader's priority is at work (runnable), in a session of its
    own too; one that set itself a higher nice, the idle policy or a higher nice on its
    autogroup waits for a CPU by its own choice and reads as asleep. A priority set on the
    whole grading (the reader at nice 7 too) is no one's choice but the machine's."""
    autogroups = Path("/proc/self/autogroup").exists()
    with ExitStack() as stack:
        spinners = [stack.enter_context(spinning()), stack.enter_context(spinning(nice=5))]
        idle = stack.enter_context(spinning())
        os.sched_setscheduler(idle.pid, os.SCHED_IDLE, os.sched_param(0))
        spinners.append(idle)
        if autogroups:
            spinners += [stack.enter_context(spinning(group_nice=0)),
                         stack.enter_context(spinning(group_nice=5))]
        seen = [strays.tree_usage(s.pid) for s in spinners]
    assert [u.runnable if u else None for u in seen] == \
        [True, False, False, *([True, False] if autogroups else [])]
    done = subprocess.run([sys.executable, "-c", READS_ITS_CHILD], capture_output=True,
                          text=True, timeout=60, check=False)
    assert done.stdout.strip() == "True", done.stderr


def test_where_priorities_cannot_be_read_no_process_is_taken_to_have_given_its_cpu_away(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A container that refuses the scheduling calls leaves the grader nothing to compare
    with: a spinning process is then at work, whatever its nice, never taken for asleep (a
    starved child stays the machine's, as before the rule)."""
    def refused(pid: int) -> int:
        raise PermissionError(1, "Operation not permitted")

    monkeypatch.setattr(os, "sched_getscheduler", refused)
    with spinning(nice=5) as niced:
        seen = strays.tree_usage(niced.pid)
    assert seen is not None and seen.runnable


@pytest.mark.parametrize("policy", [
    "nice", "idle",
    pytest.param("autogroup", marks=pytest.mark.skipif(
        not Path("/proc/self/autogroup").exists(), reason="no autogroups in this kernel"))])
def test_code_that_gives_its_cpu_away_beside_a_busy_core_times_out_as_its_own(
        tiny: Round, tmp_path: Path, policy: str) -> None:
    """Code that lowers its own priority (nice 19, the idle policy, its autogroup's nice)
    on a core that another
    process keeps busy is kept from running by its own doing: the wait counts as its sleep,
    and it times out as code that sleeps does, never `undecided` (the machine's verdict,
    which would hide a hang behind "re-run")."""
    root = write_workspace(tmp_path / "ws", "numpy", round_=tiny)
    cpu = min(os.sched_getaffinity(0))
    plan = Plan("round:spin_yielded", {"policy": policy, "cpu": cpu, "seconds": 60.0},
                lambda data: passed(data))
    with spinning(cpu=cpu):
        (result,) = _run_plans_here(tiny, root, [plan], ready=False, timeout_s=1.0)
    assert result.status == "timeout", result
    assert result.message.startswith(("sat idle for 1 s", "did not finish within 1 s of CPU")), \
        result.message


@pytest.mark.parametrize("after", ["sleeps", "spins"])
def test_a_child_that_goes_on_after_its_last_frame_is_ended_not_waited_for(
        tiny: Round, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, after: str) -> None:
    """Code can write a child's last frame itself (it runs in that child) and then sleep or
    spin instead of ending: the judge waits a moment's work for the end (END_GRACE_S), then
    kills it, and the verdict the frame carried stands. Waiting on without end would hang the
    command (its worker in wait4) for as long as the code liked."""
    from grader.runner import child as child_module

    send = child_module._send_probe

    def then_go_on(*args: object) -> None:
        send(*args)  # type: ignore[arg-type]
        while True:
            if after == "sleeps":
                time.sleep(1000)

    monkeypatch.setattr(child_module, "_send_probe", then_go_on)
    root = write_workspace(tmp_path / "ws", "numpy", round_=tiny)
    plans = [Plan("round:spin", {"seconds": 0.0}, lambda data: passed("ran"))]

    def hung(*_: object) -> None:
        raise TimeoutError("the judge waited on for a child that went on")

    previous = signal.signal(signal.SIGALRM, hung)
    signal.alarm(60)
    try:
        results = _run_plans_here(tiny, root, plans, ready=False, timeout_s=5.0)
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
    assert [(r.status, r.message) for r in results] == [("passed", "ran")]


ENDINGS = {
    "a thread refused": ('raise RuntimeError("can\'t start new thread")',
                         "RuntimeError: can't start new thread"),
    "a process refused": ("raise BlockingIOError(11, 'Resource temporarily unavailable')",
                          "BlockingIOError: [Errno 11] Resource temporarily unavailable"),
    "killed": ("import os, signal; os.kill(os.getpid(), signal.SIGKILL)",
               "killed by signal SIGKILL"),
    "stalled": ("import time; time.sleep(30)",
                "its own setup did not finish in the time allowed for importing the part"),
}


@pytest.mark.parametrize("ending", ENDINGS)
def test_what_ends_a_child_before_the_candidates_first_line_is_never_the_codes(
        tiny: Round, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, ending: str) -> None:
    """A child sets itself up (limits, capture, the filter on new processes) before the first
    line of candidate code, and says so in its first frame. What ends or stalls the first child
    before then (a thread or a process the machine's full table refused, a kill, a stall) is no
    verdict on the code: its check is undecided, saying why, and a fresh child takes the next
    checks, which pass; a stall's sleep is none of the part's (two checks that sleep 0.6 s
    each fit in the part's allowance of 2 s only if the stalled second is not taken from it).
    The same line run by the code, at its import, is the code's: an error, or a timeout."""
    from grader.engine.results import NOT_SET_UP
    from grader.runner import child as child_module

    line, why = ENDINGS[ending]
    plans = [Plan("round:spin", {"seconds": 0.0}, lambda data: passed("ran")),
             *[Plan("round:slow", {"seconds": 0.6}, lambda data: passed("ran"))] * 2]
    setup = write_workspace(tmp_path / "setup", "numpy", round_=tiny)
    once = tmp_path / "failed once"
    with monkeypatch.context() as patched:
        patched.setattr(child_module, "first_for_the_killer",
                        lambda: once.exists() or once.touch() or exec(line))
        results = _run_plans_here(tiny, setup, plans, ready=False, timeout_s=1.0)
    assert [(r.status, r.message) for r in results] == \
        [("undecided", NOT_SET_UP.format(why=why)), ("passed", "ran"), ("passed", "ran")]

    imported = write_workspace(tmp_path / "import", "numpy", round_=tiny)
    part = imported / "exercises" / "part1_sum.py"
    part.write_text(f"{line}\n{part.read_text()}")
    statuses = [r.status for r in _run_plans_here(tiny, imported, plans, ready=False,
                                                  timeout_s=1.0)]
    assert statuses == (["timeout", "skipped", "skipped"] if ending == "stalled"
                        else ["error"] * 3)


@pytest.mark.skipif(platform.machine() not in ("x86_64", "aarch64"),
                    reason="grader/runner/nofork.py has no seccomp filter for this machine")
def test_a_measured_run_can_start_no_process(tiny: Round, tmp_path: Path) -> None:
    """Work sent to another process would leave the measurement: one the kernel reaps on its
    own (started with SIGCHLD ignored) is charged to no wait4 at all. A measured run's process
    can start none: its fork fails, and the run with it."""
    root = write_workspace(tmp_path / "ws", "numpy", round_=tiny)
    runs = ({"seconds": 0.05, "hidden": True},)
    plan = Plan("round:spin", {}, _runs_report, measured=Measured((runs,), least=1))
    (result,) = _run_plans_here(tiny, root, [plan], ready=False)
    assert result.status == "error" and "PermissionError" in result.message, result


def _measured_plan(ctx: Context) -> Plan:
    return Plan("round:spin", {}, _runs_report, measured=Measured((({"seconds": 0.1},),), 1))


def _unmade(ctx: Context) -> Plan:
    raise AssertionError("a plan the request skips is not made")


@pytest.mark.parametrize(("row_says", "make", "measured", "outcome"), [
    (True, _unmade, False, "skipped"),
    (True, _measured_plan, True, "measured"),
    (False, _measured_plan, True, "its row says it is not measured in timed rounds, and its "
                                  "plan disagrees"),
    (True, lambda ctx: Plan("nothing", {}, lambda data: passed("")), True,
     "its row says it is measured in timed rounds, and its plan disagrees"),
])
def test_a_checks_row_says_whether_it_is_measured_and_its_plan_must_agree(
        row_says: bool, make: Callable[[Context], Plan], measured: bool, outcome: str) -> None:
    """A request that asks for no timed rounds skips a measured check by its row, without
    making its plan (which may be costly); a plan measured where its row says otherwise, or the
    reverse, is the round's error."""
    from grader.engine.rounds import RoundError

    check = Check(id="part1.cost", title="t", points=1.0, plan=make, flavors=("numpy",),
                  measured=row_says)
    request = Request(id="t", root="/nowhere", round="tiny-sum", flavor="numpy",
                      parts=["part1"], seed=1, measured=measured)
    ctx = Context(1, "numpy", check.id, "cpu")
    if outcome == "skipped":
        assert worker_module._planned(request, check, ctx) is worker_module.NOT_MEASURED
    elif outcome == "measured":
        assert worker_module._planned(request, check, ctx).measured is not None
    else:
        with pytest.raises(RoundError, match=f"^part1.cost: {outcome}"):
            worker_module._planned(request, check, ctx)


def _clock_plan(decide: Callable[[dict], Verdict], rounds: int) -> Plan:  # type: ignore[type-arg]
    runs = tuple(tuple({"tag": f"{number}.{size}"} for size in "abc")
                 for number in range(1, rounds + 1))
    return Plan("round:clock", {}, decide, baseline=("round:clock", {}),
                measured=Measured(runs, least=2))


def test_a_measurement_takes_the_references_run_just_before_each_of_yours(
        tiny: Round, tmp_path: Path) -> None:
    """Reference and candidate processes alternate, run by run, so both see the same machine;
    the judge sees every round so far, each run with the CPU time of its process."""
    seen: list[dict] = []  # type: ignore[type-arg]

    def decide(both: dict) -> Verdict:  # type: ignore[type-arg]
        seen.append(both)
        return passed("ok")

    root = write_workspace(tmp_path / "ws", "numpy", round_=tiny)
    (result,) = _run_plans_here(tiny, root, [_clock_plan(decide, 4)], ready=False)
    assert result.status == "passed" and len(seen) == 1
    both = seen[0]
    assert both["baseline_error"] == ""
    times = []
    for mine, theirs in zip(both["yours"], both["baseline"], strict=True):
        for run_mine, run_theirs in zip(mine, theirs, strict=True):
            assert run_mine["data"][1] == run_theirs["data"][1]
            assert run_mine["cpu_s"] >= 0 and run_theirs["cpu_s"] >= 0
            times += [run_theirs["data"][0], run_mine["data"][0]]
    assert [run["data"][1] for runs in both["yours"] for run in runs] == [
        "1.a", "1.b", "1.c", "2.a", "2.b", "2.c"]  # two rounds decided it
    assert times == sorted(times)


def _spin_report(both: dict) -> Verdict:  # type: ignore[type-arg]
    return passed(" ".join(f"{run['data']}:{run['cpu_s']}:{bool(run.get('capped'))}"
                           for runs in both["yours"] for run in runs))


@pytest.mark.parametrize("rest", [0.0, 1.0])
def test_a_run_past_the_measurements_cap_is_stopped_and_recorded_as_capped(
        tiny: Round, tmp_path: Path, rest: float) -> None:
    """A run that has used more CPU than the plan's cap proves nothing more: it is stopped
    there, costs no more, and the judge sees it as capped, with at least the cap's seconds.
    A run kept from running for longer than the CPU it has left before the cap (asleep here,
    as a stopped process or one blocked on the disk is) is still capped: the cap is on CPU
    time, and sleep is judged by the check's own allowance."""
    root = write_workspace(tmp_path / "ws", "numpy", round_=tiny)
    runs = (({"seconds": 0.05}, {"seconds": 5.0, "rest": rest}),) * 2
    plan = Plan("round:spin", {}, _spin_report,
                measured=Measured(runs, least=2, cap=lambda so_far: 0.4))
    (result,) = _run_plans_here(tiny, root, [plan], ready=False)
    runs_seen = [run.split(":") for run in result.message.split()]
    assert [(data, capped) for data, _, capped in runs_seen] == [
        ("spun", "False"), ("None", "True")] * 2
    assert all(0.4 <= float(cpu) < 2.0 for _, cpu, capped in runs_seen if capped == "True")


def test_a_child_the_machine_starves_leaves_its_check_and_the_rest_of_the_part_undecided(
        tiny: Round, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A child seen runnable at every look yet charged no CPU time (a machine too busy to run
    it) uses neither its CPU time nor its idle allowance: only the clock's backstop stops it,
    and then its check and the part's remaining checks are undecided (their points held, none
    earned), not failed, whether it was starved importing the part or running the check."""
    from grader.runner import children

    for module in (children, worker_module):
        monkeypatch.setattr(module, "BACKSTOP", 2.0)
    monkeypatch.setattr(strays, "work_usage", lambda pid: strays.Usage(0.0, True))
    root = write_workspace(tmp_path / "ws", "numpy", round_=tiny)
    plans = [Plan("round:spin", {"seconds": 30.0}, lambda data: passed("spun")),
             Plan("round:spin", {"seconds": 0.01}, lambda data: passed("spun"))]
    results = _run_plans_here(tiny, root, plans, ready=False, timeout_s=0.5)
    assert [(r.status, r.score) for r in results] == [("undecided", 0.0)] * 2
    assert all(r.max_score > 0 for r in results)  # held, not taken away
    assert results[0].message.startswith(
        "the machine was too busy to judge this: re-run when it is quieter\n"), results[0].message
    assert "got too little CPU to finish within 1 s on the clock" in results[0].message
    assert results[1].message == ("not run: the machine was too busy to judge the rest of this "
                                  "part: re-run when it is quieter")


def test_a_reference_kept_from_running_through_its_limit_leaves_what_it_serves_undecided(
        tiny: Round, tmp_path: Path) -> None:
    """A process with no candidate code never waits on anything: one asleep through its limit
    was kept from running (stopped, frozen, blocked on the disk), the machine's doing as much
    as one only the clock's backstop stopped, so the check it serves is undecided, not an
    error; the part's other checks are graded as usual."""
    root = write_workspace(tmp_path / "ws", "numpy", round_=tiny)
    quick = {"seconds": 0.01}
    plans = [Plan("round:spin", quick, lambda both: passed("judged"),
                  baseline=("round:spin", {**quick, "rest": 3.0})),
             Plan("round:spin", quick, lambda data: passed("judged"))]
    results = _run_plans_here(tiny, root, plans, ready=False, timeout_s=0.5)
    assert [r.status for r in results] == ["undecided", "passed"]
    assert results[0].score == 0.0 and results[0].max_score > 0
    assert results[0].message == (f"{worker_module.STARVED}\nthe process running the reference "
                                  "sat idle for 0.5 s (sleeping or waiting, not computing)")


def test_a_starved_reference_leaves_what_it_serves_undecided(
        tiny: Round, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A child with no candidate code that only the clock's backstop stopped (a machine too
    busy to run it) was starved: a check whose baseline or reference run it was is undecided,
    never judged without it; a failure whose slip it was to name stands, its hint saying the
    slip could not be named; the part's other checks are graded as usual."""
    from grader.checks.base import Diagnosis
    from grader.runner import children

    for module in (children, worker_module):
        monkeypatch.setattr(module, "BACKSTOP", 1.5)
    candidates: set[int] = set()  # the children that run the candidate's side: seen as they are
    real_work, real_tree = strays.work_usage, strays.tree_usage
    starved = strays.Usage(0.0, True)
    monkeypatch.setattr(strays, "work_usage",
                        lambda pid: real_work(pid) if pid in candidates else starved)
    monkeypatch.setattr(strays, "tree_usage", lambda pid, **kw: real_tree(pid, **kw)
                        if pid in candidates else starved)
    forked = fork_spawner(tiny)

    def spawn(job):  # type: ignore[no-untyped-def]
        child = forked(job)
        candidates.add(child.pid)  # type: ignore[attr-defined]
        return child

    root = write_workspace(tmp_path / "ws", "numpy", round_=tiny)
    quick, slow = {"seconds": 0.01}, ("round:spin", {"seconds": 30.0})
    naming = Diagnosis("round:spin_grid", ({"rows": [1], "columns": [2], "seconds": 30.0},),
                       ("rows", "columns"), lambda seen: "the slip, named")
    plans = [Plan("round:spin", quick, lambda both: passed("judged"), baseline=slow),
             Plan("round:spin", quick, lambda both: passed("judged"), baseline=slow,
                  measured=Measured((({},),), least=1)),
             Plan("round:spin", quick, lambda data: Verdict("failed", "wrong", "The hint.",
                                                            diagnosis=naming)),
             Plan("round:spin", quick, lambda data: passed("judged"))]
    results = _run_plans_here(tiny, root, plans, ready=False, timeout_s=1.0, spawn=spawn)
    assert [r.status for r in results] == ["undecided", "undecided", "failed", "passed"]
    assert [r.score for r in results[:3]] == [0.0] * 3 and results[3].score > 0
    assert all(r.max_score > 0 for r in results)  # held, not taken away
    for result in results[:2]:
        assert result.message == (
            "the machine was too busy to judge this: re-run when it is quieter\n"
            "the process running the reference got too little CPU to finish within 1.5 s on "
            "the clock")
    assert (results[2].message, results[2].hint) == ("wrong", (
        "The hint. (the machine was too busy to judge which slip this is: re-run when it is "
        "quieter)"))


@pytest.mark.parametrize(("undecided_rounds", "status", "rounds_run"), [
    (0, "passed", 2), (1, "passed", 3), (2, "passed", 4), (3, "undecided", 4)])
def test_an_undecided_measurement_gets_more_rounds_then_says_the_machine_was_too_busy(
        tiny: Round, tmp_path: Path, undecided_rounds: int, status: str,
        rounds_run: int) -> None:
    """Rounds that disagree are measured again, up to the plan's last round; what is still
    undecided then is reported as such: no points, none taken away, and the reason."""
    asked: list[int] = []

    def decide(both: dict) -> Verdict:  # type: ignore[type-arg]
        asked.append(len(both["yours"]))
        return undecided("rounds disagree") if len(asked) <= undecided_rounds else passed("ok")

    root = write_workspace(tmp_path / "ws", "numpy", round_=tiny)
    (result,) = _run_plans_here(tiny, root, [_clock_plan(decide, 4)], ready=False)
    assert asked == list(range(2, rounds_run + 1))
    assert result.status == status
    assert result.max_score == 10.0  # the part's weight, held whatever the status
    assert result.score == (10.0 if status == "passed" else 0.0)
    if status == "undecided":
        assert result.message == ("the machine was too busy to judge this (its measurements "
                                  "still disagreed after 4 rounds): re-run when it is quieter\n"
                                  "rounds disagree")


@pytest.fixture
def subreaper(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """This test process adopts orphans, as the worker does, for one test; its sweeps spare
    the children this process starts meanwhile as its own (helpers.SPAWNING)."""
    children = strays.children

    def sweepable(pid: int | None = None) -> set[int]:
        with SPAWNING:
            return children(pid)

    monkeypatch.setattr(strays, "children", sweepable)
    with adopting():
        yield


def test_a_forked_child_leaves_its_parents_objects_out_of_its_collections() -> None:
    """strays.fork: every object alive at the fork is frozen in the child (its collections
    walk only what it makes), and handed back to the parent's collector at once."""
    import gc

    read_fd, write_fd = os.pipe()
    pid = strays.fork()
    if pid == 0:
        os.write(write_fd, str(gc.get_freeze_count()).encode())
        os._exit(0)
    os.close(write_fd)
    frozen = int(os.read(read_fd, 64))
    os.close(read_fd)
    os.waitpid(pid, 0)
    assert frozen > 10_000
    assert gc.get_freeze_count() == 0


def test_a_rounds_warm_up_runs_once_where_the_children_are_forked(tmp_path: Path) -> None:
    """probes.py's `warm()`, where a round has one, runs once in the process that forks (so
    each child inherits what it set up), however many spawners are made; a round without one
    needs none."""
    from grader.runner.children import probe_helpers

    root = write_tiny_round(tmp_path)
    with (root / "probes.py").open("a") as probes:
        probes.write("\nWARMED = []\n\n\ndef warm():\n    import os\n"
                     "    WARMED.append(os.getpid())\n")
    round_ = Round.load(root)
    helpers = probe_helpers(round_)
    fork_spawner(round_)
    assert probe_helpers(round_).WARMED == helpers.WARMED == [os.getpid()]
    assert not hasattr(probe_helpers(Round.load(write_tiny_round(tmp_path / "plain"))), "warm")


def test_candidate_code_runs_in_the_grading_environment(grading, tmp_path: Path) -> None:
    """One thread per math library, and CUDA asked through NVML: a part 1
    that raises at import anywhere else (as it does in a bare environment) passes every check
    in the worker's children."""
    from grader.engine.rounds import get_round

    round_ = get_round("gradient-check")
    root = write_workspace(tmp_path, "numpy", round_=round_)
    exercise = root / "exercises" / round_.part("part1").file
    guarded = needing_the_grading_environment(exercise.read_text())
    bare = run_owned([sys.executable, "-c", guarded], env={}, timeout=60)
    assert "RuntimeError" in bare.stderr
    exercise.write_text(guarded)
    result = grading.run(root, "numpy", ["part1"], round_id=round_.id)
    assert {c.status for p in result.parts for c in p.checks} == {"passed"}


@pytest.mark.usefixtures("subreaper")
def test_nothing_a_child_started_outlives_it(tiny: Round, tmp_path: Path) -> None:
    """A process in a session of its own, started by the code under test, is killed (and
    reaped) by the time the child that started it has ended, not only at a timeout."""
    root = write_workspace(tmp_path / "ws", "numpy", round_=tiny)
    said = tmp_path / "pid"
    plan = Plan("round:leave_behind", {"path": str(said)}, lambda ok: passed())
    (result,) = _run_plans_here(tiny, root, [plan], ready=False)
    assert result.status == "passed"
    assert not Path(f"/proc/{int(said.read_text())}").exists()


FORGER = """\
import json, os, sys

def _request_id():
    frame = sys._getframe()
    while frame is not None:
        request = frame.f_locals.get("request")
        if hasattr(request, "id"):
            return request.id
        frame = frame.f_back
    return "unknown"

def _forge():
    event = {"type": "check", "request": _request_id(), "part": "part1", "result": {
        "id": "part1.correctness", "title": "forged", "status": "passed", "score": 20.0,
        "max_score": 20.0}}
    for fd in os.listdir(f"/proc/{os.getppid()}/fd"):
        try:
            if os.readlink(f"/proc/{os.getppid()}/fd/{fd}").startswith("pipe:"):
                with open(f"/proc/{os.getppid()}/fd/{fd}", "w") as pipe:
                    pipe.write(json.dumps(event) + "\\n")
        except OSError:
            pass

_forge()

def prefix_products_out(W, P):
    raise NotImplementedError("forged instead")
"""


def test_forged_events_cannot_reach_the_cli_through_proc(
        grading, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    """The code under test finds its request's id on the worker's stack (it is a fork of the
    worker) and writes a forged verdict into every pipe the worker holds; the worker is
    undumpable, so none gets through. Root may open any process's /proc entries whatever they
    say, through CAP_SYS_PTRACE: run as root, the test starts its worker without that
    capability (util-linux's setpriv), as any user running the grader would be."""
    root = write_workspace(tmp_path / "ws", "numpy", start="stubs")
    (root / "exercises" / "part1_inplace.py").write_text(FORGER)
    if os.geteuid() != 0:
        result = grading.run(root, "numpy", ["part1"])
    else:
        import shutil

        import grader.runner

        setpriv = shutil.which("setpriv")
        assert setpriv, "util-linux's setpriv is needed to drop CAP_SYS_PTRACE as root"
        popen = subprocess.Popen

        def without_ptrace(args: list[str], **kwargs: object) -> subprocess.Popen[bytes]:
            return popen([setpriv, "--bounding-set", "-sys_ptrace", "--", *args], **kwargs)  # type: ignore[call-overload]

        monkeypatch.setattr(grader.runner.subprocess, "Popen", without_ptrace)
        with grader.runner.Worker() as worker:
            result = worker.run(grading.request(root, "numpy", ["part1"]))
    assert [c.title for p in result.parts for c in p.checks if c.title == "forged"] == []
    assert result.score == 0


def test_in_graded_requests_what_was_observed_inside_the_process_only_advises(
        grading, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """The same right Part 1 and Part 3, graded as a coach grades and as a candidate checks:
    each check observed inside the candidate's process (identity, storage, memory, autograd
    use, operation counts) keeps its status, earns nothing when graded and says why, and the
    parts still add up to their full weights."""
    from grader.checks.table import round_checks

    root = write_workspace(tmp_path / "ws", "torch")
    inside = {c.id for c in round_checks(PREFIX) if c.observed == "inside"}
    assert {"part1.storage", "part1.memory", "part3.no_autograd", "part1.complexity"} <= inside
    results = {}
    for graded in (False, True):
        # No timed rounds: what is judged here is who earns what, not how busy the machine
        # is (a busy one could leave part3.complexity undecided).
        request = Request(id=f"g{graded}", root=str(root), round=PREFIX.id, flavor="torch",
                          parts=["part1", "part3"], seed=11, graded=graded, measured=False)
        results[graded] = grading.worker.run(request)
    for graded, result in results.items():
        unmeasured = [c for p in result.parts for c in p.checks if c.status == "skipped"]
        assert [c.id for c in unmeasured] == ["part3.complexity"], graded
        assert result.max_score == pytest.approx(55.0), graded
        assert result.score == pytest.approx(55.0 - unmeasured[0].max_score), graded
        for part in result.parts:
            for check in part.checks:
                if check.id not in inside:
                    assert check.max_score > 0
                    continue
                assert check.status == "passed"
                assert (check.max_score == 0) is graded
                assert check.message.endswith("worth no points here)") is graded
    # What the advising checks leave goes to the checks of values: every other check keeps
    # its share (an explanation is not worth more because a memory check only advises), to
    # within the eighth of a point that shares are apportioned in.
    checked, graded_run = ({c.id: c for p in results[g].parts for c in p.checks}
                           for g in (False, True))
    gained = {True: 0.0, False: 0.0}
    for check_id, check in checked.items():
        if check_id in inside:
            continue
        ranked_values = check.rank == 2
        gain = graded_run[check_id].max_score - check.max_score
        gained[ranked_values] += gain
        assert gain > -1 / POINT_UNITS - 1e-9 if ranked_values else \
            abs(gain) <= 1 / POINT_UNITS + 1e-9, check_id
    advised = sum(checked[check_id].max_score for check_id in inside if check_id in checked)
    others = sum(1 for check_id, c in checked.items() if check_id not in inside and c.rank != 2)
    assert gained[True] + gained[False] == pytest.approx(advised)
    assert abs(gained[False]) <= others / POINT_UNITS


def test_advice_points_go_to_the_checks_of_values_in_proportion() -> None:
    from grader.runner.worker import hand_on_advice

    results = [CheckResult(id=f"p.{i}", title="", status="passed", score=s, max_score=m,
                           rank=rank)
               for i, (s, m, rank) in enumerate([(2, 2, 2), (0, 4, 2), (1, 1, 0), (3, 3, 1)])]
    hand_on_advice(results, 3.0)
    assert [(r.score, r.max_score) for r in results] == [(3, 3), (0, 6), (1, 1), (3, 3)]
    alone = [CheckResult(id="p.e", title="", status="passed", score=1, max_score=1, rank=0)]
    hand_on_advice(alone, 3.0)
    assert (alone[0].score, alone[0].max_score) == (1, 1)


class _FakeChild:
    """A child whose pipe never has anything, and whose usage is scripted: how `wait_readable`
    tells a starved process (runnable, no CPU) from an idle one (asleep) and a busy one."""

    def __init__(self, runnable: bool, cpu_per_s: float) -> None:
        from grader.runner.children import Setup

        self.fd, self.write_fd = os.pipe()
        self.runnable, self.cpu_per_s = runnable, cpu_per_s
        self.began = time.monotonic()
        self.setup = Setup(done=True)  # past its setup: what it writes is a probe's frame

    def usage(self):  # type: ignore[no-untyped-def]
        from grader.runner.strays import Usage

        return Usage(self.cpu_per_s * (time.monotonic() - self.began), self.runnable)

    def close(self) -> None:
        os.close(self.fd)
        os.close(self.write_fd)


def _timed_out(child: _FakeChild, wait: Callable[[], object]) -> tuple[str, float]:
    """Why `wait` on `child` ended in FrameTimeout, and after how long on the clock (the child's
    pipe closed after)."""
    from grader.runner.children import FrameTimeout

    began = time.monotonic()
    try:
        with pytest.raises(FrameTimeout) as raised:
            wait()
    finally:
        child.close()
    return raised.value.why, time.monotonic() - began


SHORT_BACKSTOP = 3.0


@pytest.fixture
def short_backstop(monkeypatch: pytest.MonkeyPatch) -> None:
    """The clock's backstop at SHORT_BACKSTOP limits instead of BACKSTOP, for the waits that
    run into it on purpose: the rule is the same at any multiple, and the suite sleeps less."""
    from grader.runner import children

    monkeypatch.setattr(children, "BACKSTOP", SHORT_BACKSTOP)


# With the backstop at 3 limits and STRETCH at 4, a child getting at least 1/12 of a CPU is
# waited for past the backstop.
@pytest.mark.parametrize(("runnable", "cpu_per_s", "why", "waited"), [
    (True, 0.0, "wall", None),   # starved by a busy machine: waited for, up to the backstop
    (True, 1.0, "cpu", 1.0),     # computing: its CPU time is the limit
    (True, 0.01, "wall", None),  # a CPU now and then (load 100 on one core): not failed
    (True, 0.2, "cpu", 5.0),     # a fair share (load 5 on one core) whose limit comes past
                                 # the backstop: its limit, so a spinning hang times out there
    (False, 0.0, "idle", 1.0),   # asleep: cut off as fast as a spinner
    (False, 1.0, "cpu", 1.0),    # seen asleep at each look, computing between: not an idler
])
@pytest.mark.usefixtures("short_backstop")
def test_a_wait_counts_the_childs_work_and_sleep_not_the_clock(
        runnable: bool, cpu_per_s: float, why: str, waited: float | None) -> None:
    from grader.runner.children import BACKSTOP, IdleBudget, wait_readable

    limit = 0.2
    child = _FakeChild(runnable, cpu_per_s)
    budget = IdleBudget(10.0)
    ended, took = _timed_out(child, lambda: wait_readable(child, limit, budget))  # type: ignore[arg-type]
    assert ended == why
    waited = BACKSTOP if waited is None else waited
    assert took >= waited * limit - 0.05  # load only ever lengthens it
    assert (budget.left_s < 10.0 - limit / 2) is (why == "idle")


class _UnreadChild(_FakeChild):
    """A child whose usage cannot be read for its first `unread` looks (no /proc, a sandbox
    slow to answer), then reads as starved: runnable, no CPU."""

    def __init__(self, unread: int) -> None:
        super().__init__(True, 0.0)
        self.unread = unread

    def usage(self):  # type: ignore[no-untyped-def]
        self.unread -= 1
        return None if self.unread >= 0 else super().usage()


@pytest.mark.parametrize(("unread", "why"), [(2, "wall"), (10**6, "clock")])
@pytest.mark.usefixtures("short_backstop")
def test_a_wait_counts_the_clock_only_while_the_childs_usage_cannot_be_read(
        unread: int, why: str) -> None:
    """Unread at first, then starved: the clock counts as work only until the usage is read,
    then the child is waited for up to the backstop, as a starved one is ("wall"). Never read:
    the limit on the clock, which says no more than a timeout ("clock", not "wall", which would
    take it for starved)."""
    from grader.runner.children import BACKSTOP, wait_readable

    limit = 0.6
    child = _UnreadChild(unread)
    ended, took = _timed_out(child, lambda: wait_readable(child, limit))  # type: ignore[arg-type]
    assert ended == why
    waited = BACKSTOP if why == "wall" else 1.0
    assert took >= waited * limit - 0.05  # load only ever lengthens it


@pytest.mark.parametrize(("runnable", "cpu_per_s", "why"), [
    (True, 0.0, "wall"),   # starved while it writes: waited for up to the backstop
    (True, 1.0, "cpu"),    # computing, the rest never written: its CPU time is the limit
    (False, 0.0, "idle"),  # asleep mid-frame: cut off as an idler
])
@pytest.mark.usefixtures("short_backstop")
def test_the_rest_of_a_frame_begun_is_waited_for_by_the_childs_work(
        runnable: bool, cpu_per_s: float, why: str) -> None:
    """A child that writes the start of a frame and stops: the rest is waited for as a frame
    not begun is (its CPU time and sleep, the clock only as the backstop), so a frame larger
    than a pipe, written by a child a busy machine starves half way, is not cut off by the
    clock, and a child that hangs half way times out for the reason it hung."""
    import struct

    from grader.runner.children import BACKSTOP, next_frame

    limit = 0.2
    child = _FakeChild(runnable, cpu_per_s)
    os.write(child.write_fd, struct.pack(">Q", 100))
    ended, took = _timed_out(child, lambda: next_frame(child, limit))  # type: ignore[arg-type]
    assert ended == why
    waited = BACKSTOP if why == "wall" else 1.0
    assert took >= waited * limit - 0.05  # load only ever lengthens it


def test_a_frame_larger_than_a_pipe_arrives_whole_from_a_slow_writer() -> None:
    """A frame of a few pipes' worth, written in pieces with pauses between them (a child the
    scheduler keeps switching out): read whole, with the child's work as the only limit."""
    import threading

    import numpy as np

    from grader.runner.children import next_frame
    from grader.runner.protocol import dumps

    child = _FakeChild(True, 0.0)  # seen runnable, getting no CPU: starved between pieces
    sent = np.arange(40_000.0)  # 320 KB, five pipes' worth
    payload = dumps({"kind": "observation", "index": 0, "data": sent})

    def write_slowly() -> None:
        try:
            for start in range(0, len(payload), 50_000):
                os.write(child.write_fd, payload[start:start + 50_000])
                time.sleep(0.1)
        except BrokenPipeError:  # the reader gave up
            pass

    writer = threading.Thread(target=write_slowly)
    writer.start()
    try:
        # 0.7 s of pauses in all, past the 0.3 s limit: a limit on the clock would cut it off.
        frame = next_frame(child, 0.3)  # type: ignore[arg-type]
    finally:
        os.close(child.fd)
        writer.join()
        os.close(child.write_fd)
    assert frame is not None and frame["kind"] == "observation"
    assert np.array_equal(frame["data"], sent)


STOPPED_S = 2.0


class _WatchedWhileTheWaiterIsStopped(_FakeChild):
    """A scripted child (see _FakeChild) during whose second look the waiting process, this
    one, is stopped for STOPPED_S by another process and then continued, as Ctrl-Z and `fg`, a
    job scheduler's suspend and resume, or a frozen container do; its pipe gets a byte at the
    fourth look when `writes`."""

    def __init__(self, runnable: bool, writes: bool) -> None:
        super().__init__(runnable, 0.0)
        self.looks, self.writes = 0, writes

    def usage(self):  # type: ignore[no-untyped-def]
        self.looks += 1
        if self.looks == 2:
            me = os.getpid()
            subprocess.run(["sh", "-c", f"kill -STOP {me}; sleep {STOPPED_S}; kill -CONT {me}"],
                           check=True)
        if self.looks == 4 and self.writes:
            os.write(self.write_fd, b"x")
        return super().usage()


@pytest.mark.usefixtures("short_backstop")
def test_the_time_the_waiting_process_was_stopped_counts_for_nothing() -> None:
    """A child asleep (within its allowance of sleep) or starved at every look, while the
    process that waits for it is stopped for longer than that allowance or than the clock's
    backstop: what the child did in that time nobody saw, and it is counted neither as its
    sleep (the child answers in time) nor on the clock (a starved one is still waited for its
    whole backstop of time watched)."""
    from grader.runner.children import BACKSTOP, LATE_S, wait_readable

    asleep = _WatchedWhileTheWaiterIsStopped(runnable=False, writes=True)
    try:
        began = time.monotonic()
        wait_readable(asleep, 2.0)  # type: ignore[arg-type]
        assert time.monotonic() - began >= STOPPED_S  # it was stopped
    finally:
        asleep.close()

    limit = 0.5
    assert BACKSTOP * limit < STOPPED_S
    starved = _WatchedWhileTheWaiterIsStopped(runnable=True, writes=False)
    ended, took = _timed_out(starved, lambda: wait_readable(starved, limit))  # type: ignore[arg-type]
    assert ended == "wall"
    assert took >= STOPPED_S - LATE_S + BACKSTOP * limit - 0.05  # the stop less one look's lateness


class _BlockedChild(_FakeChild):
    """A scripted child (see _FakeChild) seen asleep at every look, getting no CPU, its
    processes in uninterruptible sleep ("D") where `blocked`."""

    def __init__(self, blocked: bool) -> None:
        super().__init__(False, 0.0)
        self.blocked = blocked

    def usage(self):  # type: ignore[no-untyped-def]
        from dataclasses import replace

        return replace(super().usage(), blocked=self.blocked)


@pytest.mark.parametrize(("blocked", "stalled", "why"), [
    (True, 1.0, "wall"),   # its pages read back on a thrashing machine: the machine's delay
    (True, 0.0, "idle"),   # blocked where the machine is not stalled: a wait it chose (vfork)
    (False, 1.0, "idle"),  # asleep on a stalled machine: its own sleep all the same
    (True, 0.5, "idle"),   # the machine stalled half of each look: the other half is its own
])
@pytest.mark.usefixtures("short_backstop")
def test_a_child_blocked_in_the_kernel_while_the_machine_stalls_is_waited_for_not_taken_for_asleep(
        monkeypatch: pytest.MonkeyPatch, blocked: bool, stalled: float, why: str) -> None:
    """A child in uninterruptible sleep while the kernel counts the machine stalled on memory
    or I/O (its pressure stall information, here scripted as a share of the clock) spends none
    of its allowance of sleep for that time and is waited for up to the clock's backstop, as a
    starved one is (undecided, never timed out as an idler); what the stall does not cover,
    and a child asleep by its own choice, is its sleep."""
    from grader.runner import strays
    from grader.runner.children import BACKSTOP, IdleBudget, wait_readable

    began = time.monotonic()
    monkeypatch.setattr(strays, "machine_stalls",
                        lambda: (stalled * (time.monotonic() - began), 0.0))
    limit = 0.2
    child = _BlockedChild(blocked)
    budget = IdleBudget(10.0)
    ended, took = _timed_out(child, lambda: wait_readable(child, limit, budget))  # type: ignore[arg-type]
    assert ended == why
    assert took >= (BACKSTOP if why == "wall" else 1 / (1 - stalled) if blocked else 1) \
        * limit - 0.05  # load only ever lengthens it
    assert (budget.left_s < 10.0 - limit / 2) is (why == "idle")


VFORK_NEVER_RETURNS = """\
import ctypes
libc = ctypes.CDLL(None, use_errno=True)
print(flush=True)
if libc.vfork() == 0:
    libc.pause()
"""


def test_a_process_in_uninterruptible_sleep_reads_as_blocked_not_at_work() -> None:
    """A real process in "D" (a parent whose vfork child never execs or exits) is blocked in
    its tree's usage and not at work; a tree asleep in "S" is neither. The kernel's pressure
    stall counters read as seconds where this kernel keeps them."""
    from grader.runner import strays

    process = subprocess.Popen([sys.executable, "-c", VFORK_NEVER_RETURNS],
                               stdout=subprocess.PIPE, text=True, start_new_session=True)
    try:
        assert process.stdout is not None and process.stdout.readline() == "\n"
        states: list[tuple[bool, bool]] = []
        for _ in range(200):  # the vfork child runs a moment before it pauses
            usage = strays.tree_usage(process.pid)
            assert usage is not None
            states.append((usage.blocked, usage.runnable))
            if states[-1] == (True, False):
                break
            time.sleep(0.05)
        assert states[-1] == (True, False), states
    finally:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()
    sleeper = subprocess.Popen(["sleep", "30"])
    try:
        for _ in range(100):
            asleep = strays.tree_usage(sleeper.pid)
            assert asleep is not None
            if not asleep.runnable:
                break
            time.sleep(0.05)
    finally:
        sleeper.kill()
        sleeper.wait()
    assert not asleep.runnable and not asleep.blocked
    stalls = strays.machine_stalls()
    if Path("/proc/pressure/memory").exists():
        assert stalls is not None and len(stalls) == 2 and min(stalls) >= 0
    assert strays.stalled_s((1.0, 2.0), (1.5, 2.25)) == 0.5
    assert strays.stalled_s(None, (1.0, 1.0)) == 0.0


def test_a_parts_sleep_adds_up_over_its_waits() -> None:
    from grader.runner.children import FrameTimeout, IdleBudget, wait_readable

    budget = IdleBudget(0.3)
    for _ in range(2):
        child = _FakeChild(False, 0.0)
        try:
            with pytest.raises(FrameTimeout) as raised:
                wait_readable(child, 0.2, budget)  # type: ignore[arg-type]
        finally:
            child.close()
        assert raised.value.why == "idle"
    assert budget.left_s <= 0.0


ORPHAN_WORK = """\
import os, sys, time
sys.path.insert(0, sys.argv[1])
from grader.runner import strays

strays.become_subreaper()
read_end, write_end = os.pipe()
child = os.fork()
if child == 0:  # the candidate's child: a double fork leaves an orphan that works for it
    if os.fork() == 0:
        if os.fork() == 0:
            began = time.process_time()
            while time.process_time() - began < 0.6:
                pass
            os.write(write_end, b"x")
            os._exit(0)
        os._exit(0)
    time.sleep(30)
    os._exit(0)
os.read(read_end, 1)
time.sleep(0.1)
own, with_orphans = strays.tree_usage(child), strays.work_usage(child)
print(round(own.cpu_s, 1), with_orphans.cpu_s >= 0.5, strays.reap(child, kill=True)[1] >= 0.5)
"""


def test_a_childs_cpu_counts_the_work_of_the_orphans_it_left(tmp_path: Path) -> None:
    """Work done in a grandchild that left the child's tree (a double fork) and ended: the
    process that adopted it charges it to the child while the child lives, as the child's reap
    does once it is gone, so no CPU limit or cap misses it."""
    script = tmp_path / "orphan.py"
    script.write_text(ORPHAN_WORK)
    done = run_owned([sys.executable, str(script), str(Path(__file__).parents[1])], timeout=60)
    assert done.stdout.split() == ["0.0", "True", "True"], done.stderr


def test_a_hint_that_sends_the_candidate_only_to_checks_that_passed_is_dropped() -> None:
    """"See part3.gradients" is evidence only while part3.gradients failed: pointing at a
    check that passed blames what is right, so that sentence goes; the rest of the hint (a
    line a repair found) stays, and where nothing is left the message speaks alone."""
    from grader.runner.worker import drop_hints_to_passed_checks

    def result(check_id: str, status: str, hint: str | None = None) -> CheckResult:
        return CheckResult(id=check_id, title="", status=status, score=0.0, max_score=1.0,
                           message="", hint=hint)  # type: ignore[arg-type]

    results = [result("part3.gradients", "passed"), result("part3.forward", "failed"),
               result("part3.a", "failed", "See part3.gradients for the evidence."),
               result("part3.b", "failed", "Fix part3.forward first."),
               result("part3.c", "failed", "Fix part3.forward and part3.gradients first."),
               result("part3.d", "failed", "Sum over the batch axes."),
               result("part3.e", "failed", "As part3.e says: sum the batch axes."),
               result("part3.f", "failed", "Fix the forward first (part3.gradients names its "
                      "slip). Your dW is right once your `g = x.sum(1)` reads `g = x.sum(0)`.")]
    drop_hints_to_passed_checks(results)
    assert [r.hint for r in results[2:]] == [
        None, "Fix part3.forward first.", "Fix part3.forward and part3.gradients first.",
        "Sum over the batch axes.", "As part3.e says: sum the batch axes.",
        "Your dW is right once your `g = x.sum(1)` reads `g = x.sum(0)`."]


GOOD_REQUEST = {"id": "r", "root": "/ws", "round": "prefix-products", "flavor": "torch",
                "parts": ["part1"], "seed": 7}


@pytest.mark.parametrize(("change", "says"), [
    ({"seed": "7"}, "seed should be an integer, not \"7\""),
    ({"parts": "part1"}, "parts should be a list"),
    ({"weights": {"part1": "x"}}, 'weights should be an object or null, not {"part1": "x"}'),
    ({"kind": "steal"}, "kind should be one of check, followup"),
    ({"graded": 1}, "graded should be true or false, not 1"),
    ({"colour": 1}, "it has an unknown field 'colour'"),
])
def test_a_request_is_checked_against_its_fields_where_it_arrives(change: dict,
                                                                  says: str) -> None:
    assert Request.from_dict(GOOD_REQUEST).seed == 7
    with pytest.raises(ValueError, match=f"^malformed request: {re.escape(says)}"):
        Request.from_dict({**GOOD_REQUEST, **change})
    missing = dict(GOOD_REQUEST)
    del missing["root"]
    with pytest.raises(ValueError, match="it has no 'root'"):
        Request.from_dict(missing)


@pytest.mark.parametrize(("event", "says"), [
    ({"type": "gossip"}, "an event of no known type"),
    ("done", "an event of no known type"),
    ({"type": "check", "request": "r", "part": "part1"}, "the check event: it has no 'result'"),
    ({"type": "ready", "cuda": "yes"}, "the ready event: cuda should be true or false"),
    ({"type": "done", "request": 3, "retire": False},
     "the done event: request should be a string"),
    ({"type": "done", "request": "r"}, "the done event: it has no 'retire'"),
])
def test_an_event_is_checked_against_its_type_where_it_arrives(event: object, says: str) -> None:
    from grader.runner.protocol import received_event

    done = {"type": "done", "request": "r", "retire": False}
    assert received_event(done) == done
    with pytest.raises(ValueError, match=re.escape(says)):
        received_event(event)


def test_the_sandbox_wipe_leaves_nothing_a_child_locked_away() -> None:
    """A folder the child made unwritable (0o500), holding one it made unreadable (0o000),
    is opened up and removed between children: nothing an earlier child wrote survives. Run as
    an ordinary user (root would remove it whatever its modes)."""
    import shutil
    import tempfile

    from grader.runner.executor import _wipe

    base = Path(tempfile.mkdtemp())
    os.chmod(base, 0o755)  # reachable by the ordinary user below
    folder = base / "tmp"
    folder.mkdir()
    if os.getuid() == 0:
        os.chown(folder, 65534, 65534)
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child reports through its exit status
        code = 1
        try:
            if os.getuid() == 0:
                os.setgid(65534)
                os.setuid(65534)
            (folder / "keep" / "deep").mkdir(parents=True)
            (folder / "keep" / "deep" / "answer").write_text("42")
            os.chmod(folder / "keep" / "deep", 0o000)
            os.chmod(folder / "keep", 0o500)
            (folder / "note").write_text("x")
            _wipe({str(folder): 0o755})
            code = 0 if not any(folder.iterdir()) else 2
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    shutil.rmtree(base, ignore_errors=True)
    assert os.waitstatus_to_exitcode(status) == 0


FIRST_SANDBOX_STARTED = """\
import json, sys
import grader.runner.sandbox as sandbox

def prestarted(request):
    heavy = ("grader.runner.worker", "grader.checks.kinds", "numpy", "torch")
    print(json.dumps({"round": request.round, "loaded": [m for m in heavy if m in sys.modules]}))
    raise SystemExit(0)

sandbox.prestarted = prestarted
from grader.runner import start
start.main(["--sandbox", sys.argv[1]])
"""


def test_the_first_sandbox_is_started_before_the_worker_imports_its_judge(tmp_path: Path) -> None:
    """On a cold sandboxed check the sandbox's executor, which imports torch, is the last
    process ready: the worker's entry point starts it before importing the worker, the checks,
    numpy or torch."""
    import json
    from dataclasses import asdict

    request = Request(id="first", root=str(tmp_path), round=PREFIX.id, flavor="torch",
                      parts=["part1"], seed=1, timeout_s=10.0, memory_mb=2048, device="cpu")
    done = run_owned([sys.executable, "-P", "-c", FIRST_SANDBOX_STARTED,
                      json.dumps(asdict(request))], env=SESSION_ENV, timeout=60)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == {"round": PREFIX.id, "loaded": []}


@pytest.mark.parametrize("starved", [True, False])
def test_the_watchdog_times_a_silent_worker_by_its_work_not_the_clock(
        monkeypatch: pytest.MonkeyPatch, starved: bool) -> None:
    """A worker that says its line after a second asleep, watched with a limit of 0.3 s
    (and the clock's backstop far away, whatever the load): seen runnable without getting a CPU
    (starved by a busy machine), it is waited for and heard; seen asleep, it is given up on
    once it has idled past the limit, and the reason says so."""
    from grader.runner import _Lines, children, strays

    monkeypatch.setattr(children, "BACKSTOP", 1000.0)
    if starved:
        monkeypatch.setattr(strays, "tree_usage",
                            lambda pid, **_: strays.Usage(0.0, True))
    process = subprocess.Popen(
        [sys.executable, "-c", "import time; time.sleep(1); print('ready', flush=True)"],
        stdout=subprocess.PIPE)
    try:
        lines = _Lines(process.stdout.fileno(), process.pid)  # type: ignore[union-attr]
        if starved:
            assert lines.next(0.3) == b"ready"
        else:
            with pytest.raises(TimeoutError) as raised:
                lines.next(0.3)
            assert str(raised.value) == "idle"
    finally:
        process.kill()
        process.wait()


def test_only_python_source_under_exercises_is_ever_run(grading, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """Python's own finders prefer a compiled extension to the .py beside it and import a lone
    .pyc: code that no review reads and no hint can quote. The grader imports exercises/ from
    .py source only: something compiled beside a part's source is not what runs, a part handed
    in only compiled (here, the reference's own code) is an import error saying so, and a
    helper folder without __init__.py still imports."""
    import importlib.machinery

    root = write_workspace(tmp_path / "ws", "numpy")
    exercises = root / "exercises"
    beside = exercises / f"part1_inplace{importlib.machinery.EXTENSION_SUFFIXES[0]}"
    beside.write_bytes(b"\x7fELF not a library")
    part2 = exercises / "part2_out_of_place.py"
    py_compile.compile(str(part2), cfile=str(part2.with_suffix(".pyc")), doraise=True)
    part2.unlink()
    (exercises / "helpers").mkdir()
    (exercises / "helpers" / "scale.py").write_text("def one():\n    return 1\n")
    part1 = exercises / "part1_inplace.py"
    part1.write_text(part1.read_text() + "\nfrom exercises.helpers.scale import one\n"
                     "assert one() == 1\n")
    parts = {p.id: p for p in grading.run(root, "numpy", ["part1", "part2"]).parts}
    assert parts["part1"].passed
    assert {c.status for c in parts["part2"].checks} == {"error"}
    assert "ImportError: part2_out_of_place.pyc is compiled code, which the grader does not " \
        "run: hand in the module's .py source" in parts["part2"].checks[0].message


def test_every_file_handed_in_runs_as_its_utf8_text(grading, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """A coach reads a file's text as UTF-8, and so does the grader: a helper the code reaches
    through sys.path (not only exercises/) runs from its .py, never from a bytecode cache handed
    in beside it (an unchecked hash-based one, which Python never compares with the source,
    compiled from other code), a coding declaration cannot turn what reads as a comment into
    code (`+AAo-` is a newline in UTF-7), helper packages still import, a file in latin-1 under
    its declaration runs (a one-byte encoding shows as Python reads it), and a file that is
    neither is an import error that says where."""
    root = write_workspace(tmp_path / "ws", "numpy")
    exercises = root / "exercises"
    hidden = tmp_path / "hidden.py"
    hidden.write_text("def scale():\n    return 1\n")
    (exercises / "__pycache__").mkdir(exist_ok=True)
    cache = exercises / "__pycache__" / f"helper.{sys.implementation.cache_tag}.pyc"
    py_compile.compile(str(hidden), cfile=str(cache), doraise=True,
                       invalidation_mode=py_compile.PycInvalidationMode.UNCHECKED_HASH)
    (exercises / "helper.py").write_text("# -*- coding: utf-7 -*-\ndef scale():\n"
                                         "    return 0\n# +AAo-def scale():+AAo-    return 2\n")
    (exercises / "toolbox").mkdir()
    (exercises / "toolbox" / "__init__.py").write_text("from .sub import two\n")
    (exercises / "toolbox" / "sub.py").write_text("def two():\n    return 2\n")
    part1 = exercises / "part1_inplace.py"
    part1.write_text(part1.read_text() + "\nimport os as _os, sys as _sys\n"
                     "_sys.path.insert(0, _os.path.dirname(__file__))\n"
                     "from helper import scale\nfrom toolbox import two\n"
                     "assert (scale(), two()) == (0, 2), scale()\n")
    part4 = exercises / "part4_scan.py"
    part4.write_bytes(part4.read_bytes() + b"\n# caf\xe9\n")
    part2 = exercises / "part2_out_of_place.py"
    part2.write_bytes(b"# -*- coding: latin-1 -*-\n# auteur: Ren\xe9\n" + part2.read_bytes())
    parts = {p.id: p for p in grading.run(root, "numpy", ["part1", "part2", "part4"]).parts}
    assert parts["part1"].passed, parts["part1"].checks[0].message
    assert parts["part2"].passed, parts["part2"].checks[0].message
    line = part4.read_bytes().count(b"\n")
    assert {c.status for c in parts["part4"].checks} == {"error"}
    assert f"SyntaxError: byte 0xe9 on line {line} is not UTF-8 text: save the file as UTF-8 " \
        f"(exercises/part4_scan.py, line {line})" in parts["part4"].checks[0].message


def test_compiled_code_written_at_run_time_is_never_imported(grading, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """Bytes hidden in a data file of the submission, written out at run time as a `.pyc`
    where an installed package's __path__ is pointed, would run code no review reads: a
    module compiled (bytecode or an extension) outside every installed library is an import
    error, wherever the code puts it."""
    root = write_workspace(tmp_path / "ws", "numpy")
    hidden = tmp_path / "hidden.py"
    hidden.write_text("def scale():\n    return 1\n")
    table = root / "exercises" / "part1_table.dat"
    py_compile.compile(str(hidden), cfile=str(table), doraise=True,
                       invalidation_mode=py_compile.PycInvalidationMode.UNCHECKED_HASH)
    part1 = root / "exercises" / "part1_inplace.py"
    part1.write_text(part1.read_text() + (
        "\nimport json as _json, pathlib as _pathlib, tempfile as _tempfile\n"
        "_cache = _pathlib.Path(_tempfile.mkdtemp())\n"
        "(_cache / 'tables.pyc').write_bytes((_pathlib.Path(__file__).parent / "
        "'part1_table.dat').read_bytes())\n"
        "_json.__path__.append(str(_cache))\n"
        "from json.tables import scale\n"))
    [part] = grading.run(root, "numpy", ["part1"]).parts
    assert {c.status for c in part.checks} == {"error"}
    assert "ImportError: tables.pyc is compiled code outside every installed library, which " \
        "the grader does not run" in part.checks[0].message


@pytest.mark.skipif(os.geteuid() != 0, reason="writes the worker's /proc files, as root can")
def test_the_worker_sets_back_the_scheduling_code_changed_from_outside(
        own_grading, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """What no filter reaches: code that writes its session's autogroup nice (its own file,
    shared with the worker), and, as root, the worker's killer adjustment and timer slack:
    the worker sets each back before its next child, so a later part, a later save in watch
    mode, runs as fast as the first; and its core dump filter, a store for the next child."""
    root = write_workspace(tmp_path / "ws", "numpy")
    part1 = root / "exercises" / "part1_inplace.py"
    part1.write_text(part1.read_text() + (
        "\nimport os as _os\n"
        "for _name, _value in (('self/autogroup', '19'), (f'{_os.getppid()}/oom_score_adj', "
        "'1000'), (f'{_os.getppid()}/timerslack_ns', '500000000'), "
        "(f'{_os.getppid()}/coredump_filter', '0x7f')):\n"
        "    try:\n"
        "        with open(f'/proc/{_name}', 'w') as _f:\n"
        "            _f.write(_value)\n"
        "    except OSError:\n"
        "        pass\n"))
    clean = write_workspace(tmp_path / "clean", "numpy")
    pid = own_grading.worker.process.pid

    def state() -> tuple[str, ...]:
        """Each setting's last word; none for the autogroup of a process in the session the
        machine booted into (no group of its own to name, nor to renice)."""
        return tuple(" ".join(Path(f"/proc/{pid}/{name}").read_text().split()[-1:])
                     for name in ("autogroup", "oom_score_adj", "timerslack_ns",
                                  "coredump_filter"))

    own_grading.run(clean, "numpy", ["part1"])
    before = state()
    try:
        own_grading.run(root, "numpy", ["part1"])
        assert state() != before  # the code did change them
        own_grading.run(clean, "numpy", ["part1"])
        assert state() == before
    finally:  # the session is this test's too, and the shell's that started it
        if before[0]:
            Path("/proc/self/autogroup").write_text(before[0])


def test_a_fifo_at_a_parts_name_blocks_nothing(grading, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """A FIFO left where a part's file belongs (code under test can make one) would block any
    reader for good: the judge never opens it for reading, and the part is an import error
    while the others are graded."""
    root = write_workspace(tmp_path / "ws", "numpy")
    part2 = root / "exercises" / "part2_out_of_place.py"
    part2.unlink()
    os.mkfifo(part2)
    parts = {p.id: p for p in grading.run(root, "numpy", ["part1", "part2"]).parts}
    assert parts["part1"].passed
    assert {c.status for c in parts["part2"].checks} == {"error"}
    assert "ImportError: part2_out_of_place.py is not a regular file (a folder, a FIFO, a " \
        "device or a broken link), which the grader never opens" \
        in parts["part2"].checks[0].message


def test_a_zip_archive_put_on_the_import_path_imports_nothing(grading, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """An archive under any name, put on sys.path by the candidate's code, would run modules
    (bytecode too) that no review reads: in a child only the archives Python had on its path
    before import anything."""
    import zipfile

    root = write_workspace(tmp_path / "ws", "numpy")
    exercises = root / "exercises"
    with zipfile.ZipFile(exercises / "notes.dat", "w") as archive:
        archive.writestr("helper_in_a_zip.py", "def one():\n    return 1\n")
    part1 = exercises / "part1_inplace.py"
    part1.write_text(part1.read_text() + "\nimport os as _os, sys as _sys\n"
                     "_sys.path.insert(0, _os.path.join(_os.path.dirname(__file__), 'notes.dat'))"
                     "\nimport helper_in_a_zip\n")
    (part,) = grading.run(root, "numpy", ["part1"]).parts
    assert {c.status for c in part.checks} == {"error"}
    assert "No module named 'helper_in_a_zip'" in part.checks[0].message


def _forked(body: Callable[[], None]) -> int:
    """A child forked as the runner forks one, running `body`, then exiting 0."""
    pid = strays.fork()
    if pid == 0:
        try:
            body()
        finally:
            os._exit(0)
    return pid


def _take_256_mib() -> None:
    bytearray(256 << 20)


def _reaped_in(procs: Path | Sequence[str | Path], body: Callable[[], None]) -> strays.Reaped:
    """How a child running `body` ended, as told by a process in the cgroups whose `procs`
    files are given, which forked it there and reaps it (as a grading process forks its
    children in its own cgroups)."""
    ours, theirs = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            os.close(ours)
            for joined in [procs] if isinstance(procs, Path) else procs:
                Path(joined).write_text(str(os.getpid()))
            memory._own_memory_cgroups.cache_clear()
            os.write(theirs, pickle.dumps(strays.reap(_forked(body), kill=False)))
        finally:
            os._exit(0)
    os.close(theirs)
    with os.fdopen(ours, "rb") as reading:
        told = reading.read()
    os.waitpid(pid, 0)
    return pickle.loads(told)  # type: ignore[no-any-return]


def test_a_child_the_kernel_ends_for_memory_is_said_to_be_so() -> None:
    """A child past its cgroup's memory limit (a container's, a sandbox's) is ended by the
    kernel's out-of-memory killer: its end says so, and that its cgroup counted the kill,
    where a child that sent itself SIGKILL, or one killed here, is described by its signal."""
    with ExitStack() as stack:
        try:
            procs = stack.enter_context(memory_cap(64))
        except OSError as exc:
            pytest.skip(f"needs a memory cgroup of its own (root, a memory controller): {exc}")
        overfilled = _reaped_in(procs, _take_256_mib)
    assert (overfilled.how, overfilled.here) == (strays.OUT_OF_MEMORY, True)
    suicide = _forked(lambda: os.kill(os.getpid(), 9))
    assert strays.reap(suicide, kill=False)[0] == "killed by signal SIGKILL"
    killed = _forked(lambda: time.sleep(30))
    assert strays.reap(killed, kill=True)[0] == "killed by signal SIGKILL"


@pytest.mark.parametrize("sandbox", ["--sandbox", "--no-sandbox"])
def test_the_process_running_candidate_code_is_the_first_the_killer_ends(
        tmp_path: Path, sandbox: str) -> None:
    """Candidate code runs at the highest oom_score_adj, sandboxed as plainly: memory it holds
    where no per-process measure sees it cannot make the killer pick the worker instead."""
    if sandbox == "--sandbox" and NO_SANDBOX:
        pytest.skip(NO_SANDBOX)
    root = write_part1_that_first_runs(
        tmp_path / "ws", "raise RuntimeError('adj ' + open('/proc/self/oom_score_adj').read())")
    done = run_grader("check", "part1", "--json", sandbox, cwd=root)
    messages = {c["id"]: c["message"] for p in json.loads(done.stdout)["parts"]
                for c in p["checks"]}
    assert "RuntimeError: adj 1000" in messages["part1.correctness"]


def _oom_kills_on_the_machine() -> int:
    return int(next(line.split()[1] for line in Path("/proc/vmstat").read_text().splitlines()
                    if line.startswith("oom_kill ")))


@pytest.mark.parametrize(("before", "after", "killed"), [
    ((5, 2), (6, 2), False),  # a kill elsewhere on the machine: not this process's children
    ((5, 2), (6, 3), True),
    ((5, 2, 0), (5, 2, 1), True),  # each memory cgroup this process is in counts (v1: several)
    ((5, 2), (5, None), False),  # a count that could not be read again says nothing
    ((5, None), (6, None), True),  # no cgroup's count to read: the machine's is all there is
    ((5,), (6,), True),
    ((None, None), (None, None), False),
])
def test_a_sigkill_is_the_killers_where_this_processs_cgroups_counted_one(
        before: tuple[int | None, ...], after: tuple[int | None, ...], killed: bool) -> None:
    """memory.killed_for_memory, which tells a worker's end and a child's (strays.reap), on
    readings of memory.oom_kills: the machine's count, then each own cgroup's."""
    assert memory.killed_for_memory(before, after) is killed


@pytest.mark.parametrize(("short_of_limit", "swap_short_of_limit", "reached"), [
    (0, 1 << 20, 1),
    (4096, 1 << 20, 1),  # a refused charge of two pages (a pipe buffer grown near the limit)
    (7 * 4096, 1 << 20, 1),
    (1 << 20, 4096, 1),  # the limit on memory and swap together
    (8 * 4096, 8 * 4096, 0),  # a charge the limit refuses is 8 pages at most
    (1 << 20, 1 << 20, 0),
])
def test_a_v1_cgroup_ran_out_at_its_own_limit_where_a_refused_charge_could_have_been_made(
        tmp_path: Path, short_of_limit: int, swap_short_of_limit: int, reached: int) -> None:
    """v1 keeps no count of a cgroup's own out-of-memory events: its high-water marks tell,
    and a charge of up to 8 pages that the limit refused (the largest the killer is called
    for) left the mark short of the limit by as much. Code killed there ran out of its own
    memory (an error), not the machine's (undecided)."""
    limit = 512 << 20
    for counter, short in zip(memory.V1_MARKS, (short_of_limit, swap_short_of_limit),
                              strict=True):
        (tmp_path / f"{counter}limit_in_bytes").write_text(f"{limit}\n")
        (tmp_path / f"{counter}max_usage_in_bytes").write_text(f"{limit - short}\n")
    assert memory.limit_reached(tmp_path) == reached


def test_a_child_that_dies_as_another_process_is_killed_for_memory_is_not_the_machines() -> None:
    """Code can watch the machine's count of out-of-memory kills (/proc/vmstat: readable in a
    sandbox too) and kill itself the moment a process elsewhere is killed for memory, and any
    SIGKILL may come as one does (the suite's own tests of memory run beside each other): only
    a count of the cgroups this process is in, where its children are, makes a SIGKILL the
    killer's (memory.killed_for_memory) and its check the machine's (Reaped.here,
    children.Ended.machine). Its end is its signal, and its check is not undecided; the
    machine's count stands in only where no cgroup's can be read."""
    with ExitStack() as stack:
        try:
            elsewhere = stack.enter_context(memory_cap(64))
        except OSError as exc:
            pytest.skip(f"needs a memory cgroup of its own (root, a memory controller): {exc}")
        seen = _oom_kills_on_the_machine()

        def die_with_the_next_kill() -> None:
            deadline = time.monotonic() + 20
            while _oom_kills_on_the_machine() == seen and time.monotonic() < deadline:
                time.sleep(0.01)
            os.kill(os.getpid(), 9)

        watcher = _forked(die_with_the_next_kill)
        assert _reaped_in(elsewhere, _take_256_mib).here
        timed = strays.reap(watcher, kill=False)
    counted_here = any(count is not None for count in memory.oom_kills()[1:])
    assert timed.how == ("killed by signal SIGKILL" if counted_here else strays.OUT_OF_MEMORY)
    assert not timed.here


@pytest.mark.parametrize(("sandbox_mib", "container_mib", "sandbox_full"),
                         [(64, 1024, True), (1024, 64, False)])
def test_whose_memory_ran_out_is_told_by_whose_limit_was_reached(
        monkeypatch: pytest.MonkeyPatch, sandbox_mib: int, container_mib: int,
        sandbox_full: bool) -> None:
    """A sandbox's cgroup lies inside the one the machine put the grader in (a container's): a
    process the out-of-memory killer ended while its sandbox's own limit was reached used up
    the memory the code may hold (an error); one ended while only the container's was, the
    machine's (undecided: children.Ended.machine). A sandbox's cgroup, made as every sandbox's
    is (sandbox.Cgroup, its memory and swap limits both set), inside a container's: its
    Cgroup.memory_full rises in the first case alone; each limit is the small one in turn."""
    from grader.runner import sandbox

    with ExitStack() as stack:
        try:
            procs = stack.enter_context(memory_cap(container_mib))
        except OSError as exc:
            pytest.skip(f"needs a memory cgroup of its own (root, a memory controller): {exc}")
        container, own = procs.parent, sandbox._own_cgroups()
        if (container / "memory.max").exists():
            (container / "cgroup.subtree_control").write_text("+memory +pids")
            below = {"": "/" + str(container.relative_to("/sys/fs/cgroup"))}
        else:
            below = {"memory": "/" + str(container.relative_to("/sys/fs/cgroup/memory"))}
        monkeypatch.setattr(sandbox, "_own_cgroups", lambda: {**own, **below})
        group = sandbox.Cgroup.make(f"grader-{os.getpid()}-test", sandbox_mib << 20, 64)
        stack.callback(group.remove)
        group.reset_memory_marks()
        before = group.memory_full()

        how = _reaped_in(group.procs, _take_256_mib).how
        after = group.memory_full()
    assert how == strays.OUT_OF_MEMORY
    assert before is not None and after is not None
    assert (after > before) is sandbox_full


MEASURED_CHILDREN = r"""
import os, pickle, sys
from pathlib import Path
from grader.runner.executor import prepare
round_folder, jobs, out = sys.argv[1:4]
helpers = prepare(round_folder)
from grader.probes.api import Api
from grader.probes.backends import make_backend
from grader.probes.library import resolve
from grader.runner.child import _import_module
for number, (root, flavor, module, probe, args) in enumerate(
        pickle.loads(Path(jobs).read_bytes())):
    pid = os.fork()
    if pid == 0:
        imported = _import_module(Path(root), module)
        before = set(sys.modules)
        api = Api(imported, make_backend(flavor), Path(root) / "exercises", helpers,
                  lambda name: _import_module(Path(root), name))
        resolve(api, probe)(api, **args)
        Path(out, str(number)).write_text(" ".join(sorted(set(sys.modules) - before)))
        os._exit(0)
    os.waitpid(pid, 0)
"""
"""A sandbox's executor as it prepares (executor.prepare, which no flavor changes), forking one
child per job, each job a workspace, its flavor and one run; each child imports the candidate's
part (the references, here) as a child does, then runs the probe and writes down the modules the
probe loaded."""


@pytest.mark.parametrize("round_id", sorted(installed()))
def test_a_measured_run_loads_no_module_its_parent_did_not(round_id: str,
                                                          tmp_path: Path) -> None:
    """A measured run's CPU time is compared with the reference's, and the two are forked from
    different parents (a sandbox's executor, the worker): a module that a child loads on first
    use is charged to whichever side's parent had not loaded it, as numpy.random was to every
    sandboxed candidate's run (ready_to_fork). Every timed run of every measured check, in a
    child of a process prepared as the executor prepares (the worker prepares the same way and
    loads more besides), loads nothing but the candidate's own files."""
    round_ = installed()[round_id]
    jobs = []
    for flavor in round_.flavors:
        root = write_exercises(tmp_path / flavor, round_, flavor, "references")
        measured = measured_checks(round_, flavor)
        for check in (c for c in round_checks(round_) if c.id in measured
                      and flavor in c.flavors):
            plan = check.plan(Context(TEST_SEED, flavor, check.id))
            assert plan.measured is not None
            module = round_.part(check.part_id).module
            # A timed call past the first loads what every later one would: one is enough.
            jobs += [(str(root), flavor, module, plan.probe,
                      {**plan.args, **run, **({"repeats": 1} if "repeats" in run else {})})
                     for run in plan.measured.rounds[0] if run.get("repeats", 1)]
    if not jobs:
        return
    (tmp_path / "jobs").write_bytes(pickle.dumps(jobs))
    out = tmp_path / "loaded"
    out.mkdir()
    done = run_owned([sys.executable, "-c", MEASURED_CHILDREN, str(round_.folder),
                      str(tmp_path / "jobs"), str(out)], env=SESSION_ENV, check=True)
    loaded = {int(f.name): f.read_text().split() for f in out.iterdir()}
    assert sorted(loaded) == list(range(len(jobs))), done.stderr
    assert {number: [m for m in names if not m.startswith("exercises")]
            for number, names in loaded.items()} == {n: [] for n in loaded}, \
        [(flavor, module, probe) for _, flavor, module, probe, _ in jobs]


GRADCHECK_CHILDREN = r"""
import os, sys
from pathlib import Path
from types import ModuleType
from grader.runner.executor import prepare
helpers = prepare(sys.argv[1])
from grader.runner.child import ready_for
for probe in sys.argv[3:]:
    ready_for({"calls": [{"probe": probe}]})
    pid = os.fork()
    if pid == 0:
        import numpy as np
        import torch
        torch.autograd.gradcheck = lambda *args, **kwargs: True  # as a candidate's file may
        from grader.probes.api import Api
        from grader.probes.autograd import run_gradcheck
        from grader.probes.backends import make_backend

        class Square(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * x

            @staticmethod
            def backward(ctx, grad):
                return grad  # 2 * x * grad is right

        api = Api(ModuleType("candidate"), make_backend("torch"), Path("."), helpers)
        found = run_gradcheck(api, Square.apply, [np.array([1.5, -2.0])])
        Path(sys.argv[2], probe).write_text(str(found["ok"]))
        os._exit(0)
    os.waitpid(pid, 0)
"""
"""A process prepared as a sandbox's executor prepares, which readies and forks one child per
probe named; each child reassigns torch.autograd.gradcheck as a candidate's file can, then runs
gradcheck on a function whose backward is wrong, and writes down whether it passed."""


def test_the_gradcheck_a_probe_calls_is_bound_before_the_candidates_code_runs(
        tmp_path: Path) -> None:
    """A parent readies each child for its probes (child.ready_for, in the worker and in a
    sandbox's executor alike): the gradcheck probe's child gets torch's gradcheck bound before
    any candidate code, which then cannot swap it for one that always agrees. A child that runs
    no gradcheck probe is not made to wait for gradcheck's imports (0.3 s), and binds it late if
    it ever calls it: the binding, not luck, is what keeps the real gradcheck."""
    run_owned([sys.executable, "-c", GRADCHECK_CHILDREN, str(PREFIX.folder), str(tmp_path),
               "call_each", "gradcheck"], env=SESSION_ENV, check=True)
    assert {f.name: f.read_text() for f in tmp_path.iterdir()} == {
        "gradcheck": "False", "call_each": "True"}


@pytest.mark.parametrize(("frame", "known", "hint"), [
    # a variant whose results are the truth: its sentence before what holds
    ({"kind": "observation", "data": [["right"]]}, False, "FIXED. What holds: np.var(h)."),
    # after a hint that names a known mistake already
    ({"kind": "observation", "data": [["right"]]}, True, "What holds: np.var(h). FIXED."),
    # none right: the hint as it was
    ({"kind": "observation", "data": [["wrong"]]}, False, "What holds: np.var(h)."),
    # the child hung or died: the hint as it was
    (None, False, "What holds: np.var(h)."),
    # an answer no comparison can read (a forged value): the hint as it was, no error
    ({"kind": "observation", "data": [["raise"]]}, False, "What holds: np.var(h)."),
])
def test_a_repair_puts_the_line_it_finds_beside_the_hint_and_a_starved_one_says_so(
        monkeypatch: pytest.MonkeyPatch, frame: dict[str, Any] | None, known: bool,
        hint: str) -> None:
    """name_by_repairs over a failure left unnamed: the repair's name where a stage finds one
    (in front of what holds, after a known mistake's hint), nothing where none does or the
    child could not answer, and the words of a starved diagnosis where the machine stopped
    the child (what a quieter run would name is unknown: the hint says so). The hint kept
    beside a repair, written for every flavor, is read in the part's."""
    from types import SimpleNamespace

    from grader.checks.base import Repair
    from grader.runner import worker

    def named(observations: list[Any]) -> str | None:
        if observations[-1] == [["raise"]]:
            raise OverflowError("int too large to convert to float")
        return "FIXED." if observations[-1] == [["right"]] else None

    monkeypatch.setattr(worker, "_candidate_frame", lambda *args: frame)
    monkeypatch.setattr(worker, "frame_timeout", lambda *args: 1.0)
    result = CheckResult(id="part1.values", title="", status="failed", score=0.0,
                         max_score=1.0, hint="What holds: np.var(h).")
    repair = Repair("mutant_calls", lambda: ({},), named)
    written = "What holds: {{numpy: np.var(h) | torch: h.var(unbiased=False)}}."
    grading = SimpleNamespace(checks=[SimpleNamespace(id="part1.values")], results=[result],
                              contexts=[SimpleNamespace(flavor="numpy")],
                              request=None, plans=[None], ready=False,
                              repairs=[("part1.values", repair, written, known)])
    worker.name_by_repairs(grading)  # type: ignore[arg-type]
    assert result.hint == hint

    monkeypatch.setattr(worker, "_candidate_frame",
                        lambda *args: worker.starved_frame("the process stopped"))
    result.hint = "What holds: np.var(h)."
    worker.name_by_repairs(grading)  # type: ignore[arg-type]
    assert result.hint == f"What holds: np.var(h). {worker.NOT_NAMED}"


@pytest.mark.parametrize("code", [23, 24], ids=["ENFILE", "EMFILE"])
def test_an_import_that_says_the_machine_refused_it_a_file_is_believed_only_on_the_tables_word(
        grading, tmp_path: Path, code: int) -> None:  # type: ignore[no-untyped-def]
    """A part whose import failed with the machine's table of open files full (ENFILE) is the
    machine's doing only where the table shows it (refused_a_file): the code's own OSError of
    ENFILE, raised at import with the table nearly empty, is the code's error as any failed
    import is (were it believed, every check of the part would be beyond judging, its text
    blaming classmates), and so is its own limit on files (EMFILE)."""
    root = write_workspace(tmp_path / "ws", "numpy")
    part1 = root / "exercises" / "part1_inplace.py"
    part1.write_text(part1.read_text() + f"\nimport os as _os\nraise OSError({code}, "
                     f"_os.strerror({code}))\n")
    result = grading.run(root, "numpy", ["part1"])
    assert {c.status for c in result.parts[0].checks} == {"error"}


def test_a_child_that_says_the_machine_refused_it_a_file_is_believed_while_the_table_is_crowded(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """What the worker makes of a child's import_refused, and of a sandbox lost: the machine's
    (undecided) while its table of open files is crowded as the worker sees it, the code's
    otherwise."""
    from grader.runner.sandbox import Sandboxes

    refused = {"kind": "import_refused", "message": "OSError: [Errno 23]"}
    monkeypatch.setattr(strays, "FILES_CROWDED", 1.0)
    assert not worker_module.refused_a_file(refused)
    assert Sandboxes(None, None).lose().status == "error"  # type: ignore[arg-type]
    monkeypatch.setattr(strays, "FILES_CROWDED", 0.0)
    assert worker_module.refused_a_file(refused)
    assert not worker_module.refused_a_file({**refused, "kind": "import_error"})
    assert Sandboxes(None, None).lose().status == "undecided"  # type: ignore[arg-type]


def _holding_mapped_files(count: int, first_thread_ends: bool = False) -> tuple[int, int]:
    """A forked process holding `count` files open through mappings whose descriptors it
    closed (as ctypes' mmap lets code do past any limit on descriptors), and the read end of
    a pipe it never writes: (pid, fd). `first_thread_ends`: the files are mapped by a thread
    of its, and its first thread ends (the exit call, which ends one thread), leaving a
    zombie that shows no file in /proc/<pid>/fd or map_files."""
    import ctypes
    import threading

    libc = ctypes.CDLL(None, use_errno=True)
    libc.mmap.restype = ctypes.c_void_p
    libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int,
                          ctypes.c_int, ctypes.c_long]
    ready, told = os.pipe()
    silent, kept = os.pipe()

    def hold() -> None:
        for _ in range(count):
            fd = os.open(__file__, os.O_RDONLY)
            libc.mmap(None, 4096, 1, 2, fd, 0)  # PROT_READ, MAP_PRIVATE
            os.close(fd)
        os.write(told, b"x")
        time.sleep(60)
        os._exit(0)

    pid = os.fork()
    if pid == 0:  # pragma: no cover - killed by the caller
        os.close(ready)
        if first_thread_ends:
            threading.Thread(target=hold).start()
            libc.syscall({"x86_64": 60, "aarch64": 93}[platform.machine()], 0)  # exit
        hold()
    os.close(told)
    os.read(ready, 1)
    os.close(ready)
    os.close(kept)
    if first_thread_ends:  # its exit may still be under way when the thread has its files
        wait_until(lambda: (strays.stat_fields(pid) or ["?"])[0] == "Z", pid, 5.0, 0.01)
    return pid, silent


def _sandbox_like_tree(child_steps: Callable[[], None]) -> tuple[int, int]:
    """An undumpable process (as a sandbox's executor is) and a child forked from it that
    runs `child_steps`, then forks a process that maps 300 files, and sleeps: (the undumpable
    process's pid, the read end of a pipe none of them writes). All are this process's user."""
    ready, told = os.pipe()
    silent, kept = os.pipe()
    parent = os.fork()
    if parent == 0:  # pragma: no cover - killed by the caller
        strays.set_dumpable(False)
        if os.fork() == 0:
            child_steps()
            _holding_mapped_files(300)
            os.write(told, b"x")
        time.sleep(60)
    os.read(ready, 1)
    for fd in (ready, told, kept):
        os.close(fd)
    return parent, silent


def _descendants(pid: int) -> set[int]:
    found, pending = set(), [pid]
    while pending:
        current = pending.pop()
        found.add(current)
        pending.extend(strays.children(current))
    return found


@dataclass(frozen=True)
class _Below:
    """A tree waited for as a sandbox is: its files counted below its root (files_below)."""

    fd: int
    pid: int

    def usage(self) -> strays.Usage | None:
        return strays.tree_usage(self.pid, files_below=self.pid)


def _as_an_ordinary_user(holds: Callable[[], object]) -> None:
    """Run `holds` in a forked process of user nobody, as a grader run by an ordinary user
    looks at its children's /proc; fails, printing what it answered, unless that is True."""
    reader = os.fork()
    if reader == 0:  # pragma: no cover - reports through its exit status
        code = 1
        try:
            os.setgid(65534)
            os.setuid(65534)
            answer = holds()
            code = 0 if answer is True else 2
            if code:
                print(answer, flush=True)
        finally:
            os._exit(code)
    _, status = os.waitpid(reader, 0)
    assert os.waitstatus_to_exitcode(status) == 0


def test_a_grader_run_as_an_ordinary_user_counts_a_childs_files_and_stops_one_that_hides_them(
        ) -> None:
    """A process of the grader's user that is undumpable (forked from the worker or the
    sandbox's executor, which are) keeps its /proc/<pid>/fd and map_files from a grader run as
    an ordinary user, not root: the count of a crowded machine's open files saw nothing of any
    child. Every child makes itself dumpable before its first line of candidate code
    (child.countable), the sandbox's own processes are left out of the count (files_below),
    and code that hides its files again (undumpable once more) while they are counted is
    stopped as the code's doing (FrameTimeout "hidden"); an ended process not yet reaped,
    whose /proc/<pid>/fd is root's too, holds nothing and hides nothing."""
    from grader.runner.child import countable
    from grader.runner.children import wait_readable
    from grader.runner.protocol import FrameTimeout

    def hides() -> None:
        countable()
        strays.set_dumpable(False)

    def leaves_a_zombie() -> None:  # an ended child not yet reaped: no ordinary user's to read
        countable()
        if os.fork() == 0:
            os._exit(0)

    def seen() -> object:
        strays.FILES_CROWDED = 0.0  # type: ignore[misc]
        found = []
        for steps in (countable, leaves_a_zombie, lambda: None, hides):
            parent, fd = _sandbox_like_tree(steps)
            whole = strays.tree_usage(parent)
            below = strays.tree_usage(parent, files_below=parent)
            none = strays.tree_usage(parent, files_below=strays.NO_PROCESS)
            try:
                wait_readable(_Below(fd, parent), 0.5, files_most=1 << 20)
                why = ""
            except FrameTimeout as exc:
                why = exc.why
            for pid in _descendants(parent):
                os.kill(pid, signal.SIGKILL)
            os.waitpid(parent, 0)
            os.close(fd)
            assert whole and below and none
            found.append((whole.hidden, below.hidden, below.files >= 300, none.files,
                          none.hidden, why))
        return found == [(True, False, True, 0, False, "idle"),
                         (True, False, True, 0, False, "idle"),
                         (True, True, False, 0, False, "hidden"),
                         (True, True, False, 0, False, "hidden")] or found

    _as_an_ordinary_user(seen)


def test_a_process_exiting_hides_nothing_from_a_grader_run_as_an_ordinary_user() -> None:
    """While an exiting process's memory is torn down (tens of milliseconds where it held
    hundreds of megabytes: honest code's multiprocessing workers, a subprocess ending), its
    /proc/<pid>/fd and map_files are root's, not its user's: a grader run as an ordinary user
    that took that for files kept out of its sight stopped honest code. Every look at such a
    process, from the moment it has its memory until it is a zombie, counts files and none
    is refused."""
    def refused() -> object:
        looks = refusals = 0
        for _ in range(3):
            ready, told = os.pipe()
            pid = os.fork()
            if pid == 0:
                strays.set_dumpable(True)  # as a child makes itself (child.countable)
                held = b"x" * (200 << 20)
                os.write(told, b"x" if held else b"")
                time.sleep(0.02)
                os._exit(0)
            os.read(ready, 1)
            while (fields := strays.stat_fields(pid)) is not None and fields[0] != "Z":
                looks += 1
                refusals += strays.files_of(pid, fields) is None
            os.waitpid(pid, 0)
            os.close(ready)
            os.close(told)
        return bool(looks) and not refusals or (looks, refusals)

    _as_an_ordinary_user(refused)


@pytest.mark.parametrize("first_thread_ends", [False, True], ids=["", "first-thread-ended"])
def test_a_tree_holding_too_many_of_a_crowded_machines_files_is_stopped(
        monkeypatch: pytest.MonkeyPatch, first_thread_ends: bool) -> None:
    """The machine keeps one table of open files, and a process can keep files open through
    mappings after closing their descriptors (no limit on descriptors bounds it: 1.8 million of
    2.47 million in 10 s of CPU in a sandbox). While the table is crowded, each look at a child
    counts the files its tree holds, and a tree past files_held_most() (a 32nd of the table) is
    stopped as the code's
    doing; while it is not, nothing is counted. A process whose first thread ended holds its
    files through its other threads, and is counted through them."""
    from grader.runner.children import TreeWatch, wait_readable
    from grader.runner.protocol import FrameTimeout

    pid, fd = _holding_mapped_files(300, first_thread_ends)
    try:
        assert (strays.stat_fields(pid)[0] == "Z") == first_thread_ends  # type: ignore[index]
        monkeypatch.setattr(strays, "FILES_CROWDED", 1.0)
        assert not strays.files_crowded()
        assert strays.tree_usage(pid).files == 0  # type: ignore[union-attr]
        monkeypatch.setattr(strays, "FILES_CROWDED", 0.0)
        assert strays.files_crowded()
        assert strays.tree_usage(pid).files >= 300  # type: ignore[union-attr]
        assert strays.files_held_most() >= strays.FILES_HELD_LEAST
        monkeypatch.setattr(strays, "files_held_most", lambda: 200)
        began = time.monotonic()
        with pytest.raises(FrameTimeout) as stopped:
            wait_readable(TreeWatch(fd, pid), 30.0, files_most=strays.files_held_most())
        assert stopped.value.why == "files" and time.monotonic() - began < 5
        with pytest.raises(FrameTimeout) as idle:  # no cap asked (the CLI's watch on its
            wait_readable(TreeWatch(fd, pid), 0.3)  # worker): its sleep ends the wait
        assert idle.value.why == "idle"
        assert "open files" in worker_module.BACKSTOP_WORDS["files"]
    finally:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        os.close(fd)
