"""Shared test helpers: the known-buggy solution folders as data, workspaces built from them,
and a validator for the documented `--json` document.

A solution folder tests/solutions/<round>/<case>/ holds exercise files and an `expect.toml`:

    about = "what is wrong with this code"
    flavors = ["numpy", "torch"]   # the flavors it is written for (default: both)
    start = "reference"            # what the files it does not hold start as: "reference"
                                   # (the parts it builds on are correct) or "stubs"
    parts = ["part1"]              # the parts to grade (default: those whose files it holds)
    timeout = 2                    # optional: seconds per check (default TEST_TIMEOUT_S)
    memory_mb = 256                # optional: the child's memory cap
    full_marks = false             # true: every graded check must pass

    [[expect]]                     # one table per check whose outcome is pinned
    check = "part1.correctness"
    status = "failed"              # default "failed"
    hint = "not commutative"       # optional: a substring the hint must contain
    hint_lacks = "keepdims"        # optional: a substring the hint must not contain (a cause
                                   # the code does not have, once misnamed)
    message = "first wrong entry"  # optional: a regex the message must match
    flavors = ["torch"]            # optional: pinned in these flavors only

Part files at the top of the folder serve every flavor; files under `torch/` or `numpy/` serve
that flavor only and take precedence.
"""

from __future__ import annotations

import functools
import math
import os
import shutil
import signal
import subprocess
import sys
import textwrap
import threading
import time
import tomllib
import zlib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

import pytest

from grader.engine.results import CheckResult, RunResult
from grader.engine.rounds import DEFAULT_ROUND, Round, get_round, installed
from grader.engine.workspace import write_fresh
from grader.runner import Worker, strays
from grader.runner.children import BACKSTOP, SLICE_S
from grader.runner.sandbox import Support

TESTS = Path(__file__).resolve().parent
REPO = TESTS.parent
SOLUTIONS_DIR = TESTS / "solutions"
PREFIX = get_round(DEFAULT_ROUND)
TEST_SEED = 20240
TEST_TIMEOUT_S = 20.0
MANIFEST = "expect.toml"

SESSION_ENV = {**os.environ, "PYTHONPATH": str(REPO), "NO_COLOR": "1"}
"""The environment of the grader as a user runs it, taken before any test can patch os.environ
(a job's result is kept for the other tests that want it)."""

Job = Callable[[pytest.TempPathFactory], object]
"""Work that several tests of a module want (its `JOBS`, run once per test process by
conftest's Grading.once): it may rely on nothing a test patches (the environment, the current
folder, grader's globals), so it runs the grader in processes of its own (run_grader)."""


SPAWNING = threading.RLock()
"""Held while this test process starts a child and marks it its own (strays.own): a test that
makes this process a subreaper sweeps (strays.kill_all) every child not its own, and must never
see one in between (see tests/test_runner.py). Reentrant: `adopting` lists the children under it,
which such a test's sweep does too."""
_adopting_depth = 0


def run_owned(args: list[str], *, cwd: Path | None = None, env: dict[str, str] | None = None,
              timeout: float = 300, check: bool = False, **popen: Any
              ) -> subprocess.CompletedProcess[str]:
    """subprocess.run with text output captured, `timeout` counted as `finish` counts it, for
    a child that a subreaper test running meanwhile must spare."""
    with SPAWNING:
        process = subprocess.Popen(args, cwd=cwd, env=env, stdout=subprocess.PIPE,
                                   stderr=subprocess.PIPE, text=True, **popen)
        strays.own(process.pid)
    try:
        stdout, stderr = finish(process, timeout)
    finally:
        strays.disown(process.pid)
    done = subprocess.CompletedProcess(args, process.returncode, stdout, stderr)
    if check:
        done.check_returncode()
    return done


@contextmanager
def adopting() -> Iterator[None]:
    """This test process adopts the orphans of the children it forks for the block's length and
    kills them as the worker does (after each child, and as the block ends): code that leaves a
    process in a session of its own would otherwise be handed to init and go on working beside
    the rest of the suite. The children it has already (a load the test started) are spared,
    as the worker spares its own."""
    global _adopting_depth
    if _adopting_depth:  # a block around this one adopts, sweeps and stops
        yield
        return
    with SPAWNING:
        spared = strays.children()
        for pid in spared:
            strays.own(pid)
    assert strays.become_subreaper()
    _adopting_depth += 1
    try:
        yield
    finally:
        _adopting_depth -= 1
        strays.kill_all()
        strays.become_subreaper(adopt=False)
        for pid in spared:
            strays.disown(pid)


def finish(process: subprocess.Popen[str], limit_s: float) -> tuple[str, str]:
    """process.communicate(), with the limit a test gives it counted as the grader counts a
    check's (see Work), so that a busy machine makes a test slower but cannot fail it. Past
    the limit: the process killed, subprocess.TimeoutExpired."""
    work = Work(process.pid, limit_s)
    while True:
        try:
            return process.communicate(timeout=SLICE_S)
        except subprocess.TimeoutExpired:
            pass
        if work.spent():
            process.kill()
            process.communicate()
            raise subprocess.TimeoutExpired(process.args, limit_s)


def wait_until(seen: Callable[[], bool], pid: int, limit_s: float, every_s: float = 0.1,
               explain: Callable[[], str] = lambda: "") -> None:
    """Look for `seen` every `every_s` while the process `pid` works toward it (see Work); fail
    the test, with what `explain` says, once it has spent `limit_s` without."""
    work = Work(pid, limit_s)
    while not seen():
        if work.spent():
            pytest.fail(f"not seen within {limit_s:g} s of the process's work\n{explain()}")
        time.sleep(every_s)


class Work:
    """What a process the test started has spent of a limit: the CPU time its tree gets and
    the time it spends asleep, never the clock, which counts only past BACKSTOP times the limit
    (a process starved that long, or one whose usage cannot be read)."""

    def __init__(self, pid: int, limit_s: float) -> None:
        self.pid, self.limit_s = pid, limit_s
        self.began = self.looked = time.monotonic()
        self.first = self.last = strays.tree_usage(pid)
        self.idle = 0.0

    def spent(self) -> bool:
        now_s = time.monotonic()
        now = strays.tree_usage(self.pid) or self.last
        if now is not None and self.last is not None and not now.runnable:
            self.idle += max(0.0, now_s - self.looked - (now.cpu_s - self.last.cpu_s))
        self.last, self.looked = now, now_s
        cpu = now.cpu_s - self.first.cpu_s if now is not None and self.first is not None \
            else now_s - self.began
        return self.idle + cpu > self.limit_s or now_s - self.began > BACKSTOP * self.limit_s


def run_grader(*args: str | Path, cwd: Path, env: dict[str, str] | None = None, **popen: Any
               ) -> subprocess.CompletedProcess[str]:
    """The console entry point as a user runs it, importing this checkout's grader (`popen`:
    more of subprocess.Popen's arguments)."""
    return run_owned([sys.executable, "-m", "grader", *map(str, args)], cwd=cwd,
                     env={**SESSION_ENV, **(env or {})}, **popen)


@dataclass(frozen=True)
class Expectation:
    """The outcome one check must have on a solution."""

    check: str
    status: str = "failed"
    hint: str | None = None
    hint_lacks: str | None = None
    message: str | None = None
    flavors: tuple[str, ...] = ("torch", "numpy")


@dataclass(frozen=True)
class Solution:
    """A folder of exercise files and what the grader must say about them."""

    round: Round
    name: str
    folder: Path
    about: str
    flavors: tuple[str, ...]
    start: str
    parts: tuple[str, ...]
    expect: tuple[Expectation, ...]
    full_marks: bool = False
    timeout_s: float = TEST_TIMEOUT_S
    memory_mb: int = 2048

    @property
    def key(self) -> str:
        return f"{self.round.id}/{self.name}"

    def files(self, flavor: str) -> dict[str, Path]:
        """Exercise file name -> source, the flavor's own folder overriding the shared files."""
        found = {p.name: p for p in sorted(self.folder.glob("*.py"))}
        found.update({p.name: p for p in sorted((self.folder / flavor).glob("*.py"))})
        return found


@functools.cache
def _measured(round_id: str, flavor: str) -> frozenset[str]:
    """measured_checks, once per round and flavor: it makes every check's plan, and collecting
    the known solutions asks for it hundreds of times."""
    from grader.checks.table import measured_checks

    return measured_checks(get_round(round_id), flavor)


def measured_in(solution: Solution, flavor: str) -> frozenset[str]:
    """The checks measured in timed rounds (CPU-time growth) that grading the folder runs: those
    of its parts that it pins, or all of them where it claims full marks. Rounds of timed runs
    prove nothing else a folder asserts, and they are most of the matrix's time: a folder
    without any is graded without them, in the quick tier; one with them is in the slow tier."""
    from grader.checks.table import checks_for

    ran = {c.id for part in solution.parts for c in checks_for(solution.round, part, flavor)}
    measured = _measured(solution.round.id, flavor) & ran
    if solution.full_marks:
        return measured
    return measured & {e.check for e in solution.expect if flavor in e.flavors}


def in_quick_tier(solution: Solution, flavor: str) -> bool:
    """Whether the quick tier grades the folder in this flavor: in none where grading it runs
    timed rounds (measured_in), else in one flavor only, the one the folder pins most in
    (a tie decided by a hash of its name, so that the quick tier grades about as many folders
    in each flavor). The slow tier grades the other flavors: CI grades every pair."""
    if measured_in(solution, flavor):
        return False
    pinned = {f: sum(f in e.flavors for e in solution.expect) for f in solution.flavors}
    most = [f for f in solution.flavors if pinned[f] == max(pinned.values())]
    return flavor == most[zlib.crc32(solution.key.encode()) % len(most)]


def load_solution(folder: Path) -> Solution:
    """Read and validate one solution folder (its parent is named for its round); a mistake in
    the data fails loudly."""
    round_ = get_round(folder.parent.name)
    part_files = {part.file: part.id for part in round_.parts}
    data = tomllib.loads((folder / MANIFEST).read_text())
    known = {"about", "flavors", "start", "parts", "expect", "full_marks", "timeout",
             "memory_mb"}
    unknown = set(data) - known
    if unknown:
        raise ValueError(f"{folder.name}/{MANIFEST}: unknown keys {sorted(unknown)}")
    names = {p.name for p in folder.glob("*.py")} | {
        p.name for flavor in round_.flavors for p in (folder / flavor).glob("*.py")}
    stray = names - set(part_files) - {"__init__.py"}
    if stray:
        raise ValueError(f"{folder.name}: files that are not exercise files: {sorted(stray)}")
    parts = tuple(data.get("parts") or sorted({part_files[n] for n in names if n in part_files}))
    return Solution(
        round=round_,
        name=folder.name,
        folder=folder,
        about=str(data["about"]),
        flavors=tuple(data.get("flavors", round_.flavors)),
        start=str(data.get("start", "reference")),
        parts=parts,
        expect=tuple(_expectation(folder.name, e) for e in data.get("expect", [])),
        full_marks=bool(data.get("full_marks", False)),
        timeout_s=float(data.get("timeout", TEST_TIMEOUT_S)),
        memory_mb=int(data.get("memory_mb", 2048)),
    )


def _expectation(name: str, data: dict[str, Any]) -> Expectation:
    data = {**data, "flavors": tuple(data.get("flavors", ("torch", "numpy")))}
    try:
        return Expectation(**data)
    except TypeError as exc:
        raise ValueError(f"{name}/{MANIFEST}: bad [[expect]] table {data}: {exc}") from exc


def all_solutions() -> list[Solution]:
    """Every solution folder of every installed round."""
    return [load_solution(f) for round_id in installed()
            for f in sorted((SOLUTIONS_DIR / round_id).glob("*")) if (f / MANIFEST).is_file()]


def solution(name: str, round_id: str = DEFAULT_ROUND) -> Solution:
    return load_solution(SOLUTIONS_DIR / round_id / name)


GOLDEN = TESTS / "golden"


def matches_golden(name: str, text: str) -> bool:
    """Whether `text` is the whole rendering pinned in tests/golden/NAME. To accept a
    deliberate change: GRADER_UPDATE_GOLDEN=1 python -m pytest THE_TEST, then read the diff."""
    path = GOLDEN / name
    if os.environ.get("GRADER_UPDATE_GOLDEN"):
        path.parent.mkdir(exist_ok=True)
        path.write_text(text)
    return text == path.read_text()


LENT = Support(None, True, "", None, "")
"""What `grader.runner.sandbox.support` answers in a test whose pool is lent: the sandbox is not
that test's subject, and its workers fork their children themselves."""


def _no_sandbox_reason() -> str:
    from grader.runner.sandbox import support

    found = support()
    return "" if found.usable else f"no sandbox on this machine: {found.why}"


NO_SANDBOX = _no_sandbox_reason()
needs_sandbox = pytest.mark.skipif(bool(NO_SANDBOX), reason=NO_SANDBOX)
"""For a test that grades in the real sandbox: skipped, saying why, where none can be made."""


def lend_pool(patch: Any, start_worker: Callable[[], Any], jobs: int | None = None) -> None:
    """`grade` and `selfcheck` in this test grade through workers of the test's own (the
    session's, lent, or one that fails on purpose), in children they fork; the check that a
    sandbox can be made is answered yes, so that the test runs where bubblewrap cannot. (A
    lent worker knows the rounds it knew when it started: a round made by the test needs a
    worker of its own.)"""
    import grader.coach.batch
    import grader.coach.selfcheck
    from grader.runner import sandbox
    from grader.runner.pool import WorkerPool

    def pool(count: int, **_: Any) -> WorkerPool:
        return WorkerPool(jobs or count, start_worker=start_worker)

    patch.setattr(grader.coach.batch, "WorkerPool", pool)
    patch.setattr(grader.coach.selfcheck, "WorkerPool", pool)
    patch.setattr(sandbox, "support", lambda: LENT)


class LentWorker:
    """A warm worker of the test session, lent to one command without a torch import: `with`
    hands it over (as `with Worker()` would), and a WorkerPool may run requests on it, but
    neither closes it."""

    def __init__(self, worker: Worker) -> None:
        self.worker = worker

    def __enter__(self) -> Worker:
        return self.worker

    def __exit__(self, *exc: object) -> None:
        return None

    def __getattr__(self, name: str) -> Any:
        """Everything but closing is the worker's own (run, follow_up, cuda, ...)."""
        return getattr(self.worker, name)

    def close(self) -> None:
        """The worker stays up for the next test."""

    def kill(self) -> None:
        """The worker stays up for the next test."""


class Load(NamedTuple):
    """A program that keeps a machine busy in one way: what it sets up, then what it repeats."""

    setup: str
    step: str


LOADS = {
    # One core's worth of plain computing.
    "spin": Load("", "pass"),
    # A few tenths of a second on the CPU, then about as long asleep, at random: the load moves
    # between one timed run and the next.
    "bursts": Load("import random, time", """
until = time.monotonic() + random.uniform(0.02, 0.4)
while time.monotonic() < until:
    pass
time.sleep(random.uniform(0.02, 0.4))"""),
    # Copies through arrays far larger than any cache: the memory bus and the caches are what is
    # shared, so every other process's work costs more CPU time for the same result.
    "memory": Load("""
import numpy as np
source = np.ones(1 << 25)
target = np.empty_like(source)""", "np.copyto(target, source)"),
    # Writes flushed to the disk: other processes wait on it (reading a module, writing a file).
    "io": Load("""
import os, tempfile
block = os.urandom(1 << 22)
file = tempfile.TemporaryFile()""", """
for _ in range(64):
    file.write(block)
    file.flush()
    os.fsync(file.fileno())
file.seek(0)
file.truncate()"""),
    # A GiB of memory taken and kept (the machine has no swap to put it in): with enough of them,
    # the kernel makes room by dropping cached files, so libraries' code is read from the disk
    # again as it runs, and processes wait on the disk at no CPU cost.
    "held": Load("""
import mmap, time
block = mmap.mmap(-1, 1 << 30)
for offset in range(0, 1 << 30, mmap.PAGESIZE):
    block[offset] = 1""", "time.sleep(60)"),
    # Processes made and ended as fast as the kernel allows: the scheduler and the process
    # table are what is shared.
    "forks": Load("import os", """
pid = os.fork()
if pid == 0:
    os._exit(0)
os.waitpid(pid, 0)"""),
}
"""The ways `busy` keeps a machine busy."""


@contextmanager
def busy(count: int, kind: str = "spin") -> Iterator[list[subprocess.Popen[str]]]:
    """`count` processes running the LOADS program `kind` until the block ends, each set up
    (its memory taken, its file open) before the block begins."""
    loads = [_loading(kind) for _ in range(count)]
    try:
        for started in loads:
            _set_up(started, kind)
        yield loads
    finally:
        for started in loads:
            started.kill()
            started.wait()


def _loading(kind: str, preexec: Callable[[], None] | None = None) -> subprocess.Popen[str]:
    """A process starting the LOADS program `kind` (after `preexec`, in the new process)."""
    load = LOADS[kind]
    program = f"{load.setup}\nprint(flush=True)\nwhile True:\n{textwrap.indent(load.step, '    ')}"
    return subprocess.Popen([sys.executable, "-c", program], stdout=subprocess.PIPE, text=True,
                            preexec_fn=preexec)


def _set_up(started: subprocess.Popen[str], kind: str) -> None:
    """Wait until a _loading process has set up its load."""
    assert started.stdout is not None
    if started.stdout.readline() != "\n":
        raise RuntimeError(f"a {kind} load ended before it was set up")


@contextmanager
def spinning(nice: int = 0, cpu: int | None = None,
             group_nice: int | None = None) -> Iterator[subprocess.Popen[str]]:
    """One process spinning (LOADS["spin"]) at `nice`, pinned to `cpu`, in a session of its
    own whose autogroup is at `group_nice`, each where given: spinning once the block begins,
    killed as it ends."""
    def lowered() -> None:
        if cpu is not None:
            os.sched_setaffinity(0, {cpu})
        os.nice(nice)
        if group_nice is not None:
            os.setsid()
            Path("/proc/self/autogroup").write_text(str(group_nice))

    started = _loading("spin", lowered)
    try:
        _set_up(started, "spin")
        yield started
    finally:
        started.kill()
        started.wait()


def held_by_a_tracer(pid: int) -> None:
    """Attach to `pid` with ptrace (it stops, state "t"), as a debugger would; skips the test
    where ptrace is refused."""
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    if libc.ptrace(16, pid, None, None) != 0:  # PTRACE_ATTACH
        pytest.skip(f"no ptrace here (errno {ctypes.get_errno()})")
    # The attach's stop, taken here by the tracer: left pending, it is what the tracee's
    # parent (this process, for a child it started) would reap in its next poll, as if the
    # child had ended, and then never kill or reap the child itself.
    os.waitpid(pid, 0x40000000)  # __WALL


def _deepest(pid: int) -> set[int]:
    below = strays.children(pid)
    return set().union(*map(_deepest, below)) if below else {pid}


@contextmanager
def stopping(root: int, stopped_s: float = 2.0, running_s: float = 1.0) -> Iterator[set[int]]:
    """The deepest processes below `root` (the one at work: a child running a probe, or the
    worker between children) stopped for `stopped_s` at a time, `running_s` apart, until the
    block ends, then continued: processes kept from running with no CPU busy (a container
    frozen for a moment, a debugger, a laptop's lid), which neither spins nor sleeps by its own
    choice. Each round stops processes not stopped before, as soon as there are some (the
    grading continues what it finds stopped at its next look, so a process stopped again and
    again would be no new test, and a grading that ran on between rounds would escape it).
    Yields the set of every process it stopped, filled in as it goes."""
    stopped: set[int] = set()
    halt = threading.Event()

    def stop_again_and_again() -> None:
        while not halt.is_set():
            # Never the process that continues them.
            held = _deepest(root) - {os.getpid()} - stopped
            if not held:
                halt.wait(0.02)
                continue
            for pid in held:
                _signal(pid, signal.SIGSTOP)
            stopped.update(held)
            halt.wait(stopped_s)
            for pid in held:
                _signal(pid, signal.SIGCONT)
            halt.wait(running_s)

    thread = threading.Thread(target=stop_again_and_again, daemon=True)
    thread.start()
    try:
        yield stopped
    finally:
        halt.set()
        thread.join()


def _signal(pid: int, number: int) -> None:
    try:
        os.kill(pid, number)
    except ProcessLookupError:
        pass


CGROUPS = Path("/sys/fs/cgroup")
QUOTA_PERIOD_US = 100_000


@contextmanager
def cpu_quota(cpus: float, first: bool = False) -> Iterator[Path]:
    """A cgroup below this process's own whose processes together get `cpus` CPUs' time, as in a
    container with a CPU limit (Gradescope's, a CI runner's), for as long as the block runs;
    yields its cgroup.procs (a process joins by writing its pid there, its later children with
    it). `first`: the cgroup also outweighs everything else on the machine (the largest weight
    the kernel takes), so its processes get their quota however busy the machine is and the
    quota, not the other work, is what holds them back (a machine 16 busy loops deep gives an
    ordinary cgroup less than half a CPU, and a quota of half a CPU then never binds). OSError
    where none can be made: not root, or no cpu controller (cgroup v2's cpu.max, v1's CFS
    quota)."""
    quota = str(int(cpus * QUOTA_PERIOD_US))
    v2, v1 = {"cpu.max": f"{quota} {QUOTA_PERIOD_US}"}, \
        {"cpu.cfs_period_us": str(QUOTA_PERIOD_US), "cpu.cfs_quota_us": quota}
    if first:
        v2["cpu.weight"], v1["cpu.shares"] = "10000", "262144"
    with _cgroup("cpu", v2, v1) as procs:
        yield procs


@contextmanager
def process_cap(tasks: int) -> Iterator[Path]:
    """A cgroup whose processes together may have `tasks` processes and threads, as in a
    container with a limit on them (past it fork, clone and thread starts fail with EAGAIN),
    as cpu_quota makes."""
    with _cgroup("pids", {"pids.max": str(tasks)}, {"pids.max": str(tasks)}) as procs:
        yield procs


@contextmanager
def memory_cap(mib: int) -> Iterator[Path]:
    """A cgroup whose processes together may hold `mib` MiB, as in a container with a memory
    limit (past it the kernel's out-of-memory killer ends one of them), as cpu_quota makes."""
    limit = str(mib * 1024 * 1024)
    with _cgroup("memory", {"memory.max": limit},
                 {"memory.limit_in_bytes": limit}) as procs:
        yield procs


@contextmanager
def _cgroup(controller: str, v2_limits: dict[str, str], v1_limits: dict[str, str]
            ) -> Iterator[Path]:
    """A cgroup below this process's own with the limits of cgroup v2 (unified) or of v1's
    `controller`, whichever this machine has; its cgroup.procs is yielded."""
    own = {name: path for line in Path("/proc/self/cgroup").read_text().splitlines()
           for _, controllers, path in [line.split(":", 2)]
           for name in (controllers.split(",") if controllers else [""])}
    name = f"limit-{os.getpid()}-{time.monotonic_ns()}"
    if (CGROUPS / "cgroup.controllers").is_file() and "" in own:
        group, limits = CGROUPS / own[""].lstrip("/") / name, v2_limits
    elif controller in own and (CGROUPS / controller).is_dir():
        group, limits = CGROUPS / controller / own[controller].lstrip("/") / name, v1_limits
    else:
        raise OSError(f"no cgroup {controller} controller for this process")
    group.mkdir()
    try:
        for file, value in limits.items():
            (group / file).write_text(value)
        yield group / "cgroup.procs"
    finally:
        for _ in range(100):  # the last processes of a grading may take moments to be reaped
            try:
                # A sandbox's own cgroup inside this one outlives a worker the kernel killed.
                for inner in (p for p in group.iterdir() if p.is_dir()):
                    inner.rmdir()
                group.rmdir()
                break
            except OSError:
                time.sleep(0.05)


def checks_by_id(result: RunResult) -> dict[str, CheckResult]:
    return {c.id: c for part in result.parts for c in part.checks}


def run_tiny_sandboxed(tmp_path: Path, plans: list[Any], timeout_s: float = 10.0,
                       code: str | None = None,
                       wrap: Callable[[Any], Any] | None = None) -> list[CheckResult]:
    """tests/tiny_round.py's part 1 (its file replaced by `code`) graded plan by plan, one
    check each, through the real runner in one sandbox of its own, as a request is. `wrap`
    gets the sandbox's spawn and gives the one the runner calls (to act as each child starts)."""
    from tiny_round import write_tiny_round

    from grader.checks.base import Check, Context
    from grader.runner.protocol import Request
    from grader.runner.sandbox import sandboxed_children
    from grader.runner.worker import _Part, run_part

    tiny = Round.load(write_tiny_round(tmp_path / "rounds"))
    root = write_workspace(tmp_path / "ws", "numpy", round_=tiny)
    if code is not None:
        (root / "exercises" / "part1_sum.py").write_text(code)
    checks = [Check(f"part1.plan{i}", f"plan {i}", 1.0, lambda ctx, plan=plan: plan, ("numpy",))
              for i, plan in enumerate(plans)]
    request = Request(id="t", root=str(root), round=tiny.id, flavor="numpy", parts=["part1"],
                      seed=1, timeout_s=timeout_s)
    with sandboxed_children(request, tiny) as spawn:
        return run_part(_Part(request, tiny, tiny.part("part1"), checks,
                              [Context(1, "numpy", c.id) for c in checks], plans,
                              wrap(spawn) if wrap else spawn))


def write_workspace(root: Path, flavor: str, start: str = "reference",
                    files: dict[str, Path] | None = None, round_: Round = PREFIX) -> Path:
    """A fresh workspace at root: stubs, optionally the flavor's reference on top, then files."""
    workspace = write_fresh(root, round_, flavor)
    if start == "reference":
        for part in round_.parts_for(flavor):
            shutil.copy(round_.reference_file(part, flavor), workspace.exercises / part.file)
    for name, source in (files or {}).items():
        shutil.copy(source, workspace.exercises / name)
    return workspace.root


def write_part1_that_first_runs(root: Path, line: str) -> Path:
    """A torch workspace at root with the reference's part 1, whose function runs `line` first
    in every call (a call that takes memory, one that reports what its process is given)."""
    root = write_workspace(root, "torch")
    part1 = root / "exercises" / "part1_inplace.py"
    signature = "def prefix_products_out(W: torch.Tensor, P: torch.Tensor) -> torch.Tensor:\n"
    part1.write_text(part1.read_text().replace(signature, f"{signature}    {line}\n", 1))
    return root


def needing_the_grading_environment(source: str) -> str:
    """An exercise file's `source` that raises at import unless its process has the environment
    every grading process is given (runner.process_env), so that its checks pass only there."""
    from grader.runner.process_env import GRADING_ENV

    return (f"{source}\n"
            f"import os as _os\n"
            f"if {{n: _os.environ.get(n) for n in {sorted(GRADING_ENV)!r}}} != {GRADING_ENV!r}:\n"
            f"    raise RuntimeError(dict(_os.environ))\n")


# ---- the documented JSON documents ----------------------------------------------------------

SCHEMAS = REPO / "docs" / "schemas"


def validate_document(doc: Any, stem: str) -> None:
    """Assert that doc validates against docs/schemas/<stem>.schema.json (the file, not the
    generator: what a consumer of the document reads)."""
    import json

    from jsonschema import Draft202012Validator

    validator = Draft202012Validator(json.loads((SCHEMAS / f"{stem}.schema.json").read_text()))
    problems = sorted(validator.iter_errors(doc), key=lambda e: list(e.absolute_path))
    assert not problems, "; ".join(f"{'/'.join(map(str, e.absolute_path)) or 'document'}: "
                                   f"{e.message}" for e in problems[:3])


def _close(a: float, b: float) -> bool:
    return math.isclose(a, b, rel_tol=1e-6, abs_tol=1e-3)


def validate_check(check: Any, where: str) -> None:
    """The rules the schema cannot say: a score within its maximum, full for a pass, none
    for anything but a pass or a failure."""
    score, max_score = check["score"], check["max_score"]
    assert all(math.isfinite(v) for v in (score, max_score, check["duration_s"])), where
    assert check["duration_s"] >= 0, f"{where}.duration_s"
    assert 0 <= score <= max_score + 1e-9, f"{where}: score {score} outside [0, {max_score}]"
    if check["status"] == "passed":
        assert _close(score, max_score), f"{where}: passed but scored {score}/{max_score}"
    elif check["status"] != "failed":
        assert score == 0, f"{where}: {check['status']} but scored {score}"


def validate_run_json(doc: Any) -> None:
    """Assert that doc is a `check --json` document (its JSON Schema), of a real round and
    flavor, whose parts hold their own checks and whose scores add up."""
    validate_document(doc, "check")
    round_ = get_round(doc["round"])
    assert doc["flavor"] in round_.flavors, f"flavor {doc['flavor']!r}"
    for p, part in enumerate(doc["parts"]):
        where = f"parts[{p}]"
        assert part["id"] in round_.part_ids, f"{where}.id {part['id']!r}"
        assert part["title"] and part["checks"], f"{where}: a title and checks"
        for c, check in enumerate(part["checks"]):
            validate_check(check, f"{where}.checks[{c}]")
            assert check["id"].startswith(part["id"] + "."), f"{check['id']} under {part['id']}"
        for key in ("score", "max_score"):
            total = sum(c[key] for c in part["checks"])
            assert _close(part[key], total), f"{where}.{key} {part[key]} != sum {total}"
    for key in ("score", "max_score"):
        total = sum(p[key] for p in doc["parts"])
        assert _close(doc[key], total), f"{key} {doc[key]} != sum of parts {total}"
