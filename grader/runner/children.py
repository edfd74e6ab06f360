"""A child as the worker sees it: a process running one ChildJob, whose frames arrive on a pipe
and whose calls' arguments it is handed, one call at a time, on a socket (Orders).

Two kinds: ForkedChild, forked from the worker itself (practice mode, and every baseline, which
runs no candidate code), and the sandbox's children (grader.runner.sandbox), forked inside
bubblewrap on the worker's word. The worker treats both alike.
"""

from __future__ import annotations

import os
import select
import socket
import time
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass
from types import ModuleType
from typing import Any, Protocol

from grader.engine.results import NOT_SET_UP, SHORT_OF_MEMORY, TOO_BUSY, Status
from grader.engine.rounds import Round, load_module
from grader.runner import strays
from grader.runner.protocol import (
    LAST_WORDS_SIGNAL,
    ChildJob,
    FrameTimeout,
    Request,
    TimeoutWhy,
    probe_frame,
    read_frame,
    send_orders,
    until,
)

LAST_WORDS_GRACE_S = 0.5  # how long a hung child may take to send what it printed


@dataclass(frozen=True)
class Ended:
    """How a child ended, in words, and the CPU seconds the kernel charged it (user + system,
    its waited-for children included), read by its parent: a figure the child cannot forge.
    `machine`: where the machine, not the code, ended it, what the machine did, in a check's
    words (results.SHORT_OF_MEMORY: the kernel's out-of-memory killer ended it for memory that
    was not the code's to use up, its container's or the machine's; TOO_BUSY: its sandbox got
    too little CPU to run): what it was doing is undecided, not failed. Only a kill a memory
    cgroup counted among its own processes is believed (never the machine's count alone, which
    code could watch and kill itself by); a child forked here is then the machine's, its
    address-space cap holding what it maps below its allowance; a sandbox's child is the
    machine's unless its sandbox's own limit ran out (sandbox.SandboxedChild.end)."""

    how: str
    cpu_s: float
    machine: str = ""


@dataclass
class Setup:
    """What a child said of its own setup (limits, capture, the filter on new processes),
    which it does before any code of the candidate's runs, in its first frame: "set_up", or
    "setup_failed" with why. Until it has said it is set up, nothing the child does, and no
    way it ends or hangs, is the code's: the machine refused it something (a thread, a
    process, memory) or the grader failed."""

    done: bool = False
    failure: str = ""
    beside_strays: bool = False
    """Processes the code under test left behind were alive when the child was forked: they
    could end or stall it before its setup, so nothing before then is taken for the machine's."""

    @property
    def before_the_code(self) -> bool:
        """Whether what ends or stalls the child now is none of the code's doing: it has not
        said it is set up, and no strays of the code's were beside it."""
        return not (self.done or self.beside_strays)

    def machine(self, how: str) -> str:
        """A check's words for a child that ended (`how`) before the code (see
        before_the_code); nothing otherwise."""
        return NOT_SET_UP.format(why=self.failure or how) if self.before_the_code else ""


class ChildrenLost(Exception):
    """No child can be started for the rest of this request (its sandbox was lost: the code
    under test stopped or killed it; or it never started on a machine too busy to give it a
    CPU); the message says so, for every check not run, each reported with `status`."""

    def __init__(self, message: str, status: Status = "error") -> None:
        super().__init__(message)
        self.status: Status = status


class Watched(Protocol):
    """Something waited for (see wait_readable): a pipe or socket it writes to, and what its
    processes are doing."""

    @property
    def fd(self) -> int: ...

    def usage(self) -> strays.Usage | None: ...


class Child(Watched, Protocol):
    """A process running one ChildJob, forked here or in a sandbox; the worker reads its
    frames from `fd`, and hands it each call's arguments with `release` (see ChildJob for when
    a caller may). `setup`: what it said of its own setup (next_frame reads that)."""

    setup: Setup

    def release(self) -> None: ...

    def last_words(self) -> tuple[str, str]: ...

    def end(self, kill: bool) -> Ended: ...


@dataclass(frozen=True)
class TreeWatch:
    """A process tree this process started, waited for on `fd`: what a starting sandbox or a
    grading worker is doing, read from /proc."""

    fd: int
    pid: int

    def usage(self) -> strays.Usage | None:
        return strays.tree_usage(self.pid)


class Orders:
    """The judge's end of a child's orders socket, with the arguments of the job's calls not
    yet released. The other end (`child_fd`) goes to the child, and is closed here once it
    has."""

    def __init__(self, job: ChildJob) -> None:
        self.sock, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.setblocking(False)
        self.child_fd = theirs.detach()
        self.pending = list(job.args)

    def handed_over(self) -> None:
        os.close(self.child_fd)

    def release(self) -> None:
        """Send the next call's arguments (none left: nothing to do)."""
        if self.pending:
            send_orders(self.sock, self.pending.pop(0))

    def close(self) -> None:
        self.sock.close()


Spawn = Callable[[ChildJob], Child]
Children = Callable[[Request, Round], AbstractContextManager[Spawn]]
"""Gives a request its way of running candidate code: forked here, or one sandbox for it."""


BACKSTOP = 10.0
"""The wall-clock backstop of a wait, in multiples of its limit: how long a child that keeps
waiting for a CPU (a machine busy with other work) is waited for at least."""
STRETCH = 4.0
"""How far past BACKSTOP a wait goes on for a child that is getting CPU time all the same:
one that has had at least 1 / (BACKSTOP * STRETCH) of a CPU since the wait began (a fair share
on a machine running 40 busy processes per core) would use its limit by then, so it is judged
by its limit (a spinning hang times out) instead of being taken for starved."""
SLICE_S = 0.25
"""How often a waiting worker looks at what the child is doing."""
LATE_S = SLICE_S
"""How much longer than it asked for a look may take before the waiting process is taken to
have been kept from looking: stopped itself (Ctrl-Z, a job scheduler's suspend), frozen with
its container, paused with its VM, or kept waiting for the child's usage (a sandbox slow to
answer). A child seen asleep after such a look counts as asleep for the look it asked for and
this much more, not for the time nobody watched."""


@dataclass
class IdleBudget:
    """Seconds of sleep a whole part may spend over all its waits: a child that idles a little
    before each answer is cut off once their sum runs out."""

    left_s: float


def wait_readable(child: Watched, limit_s: float, budget: IdleBudget | None = None,
                  progress: Callable[[], None] = lambda: None,
                  backstop_s: float | None = None, idle_s: float | None = None,
                  files_most: int | None = None) -> float:
    """Wait until the child's pipe has something to read; the seconds of its limit the child
    has left (its unused CPU time, or idle time, whichever is less). The limit counts work, not
    the clock: the child's CPU time (Usage.work_s: its tree's, and what its cgroup counted
    beyond that), and the time it spends asleep (sleeping, or blocked on
    nothing the grader gives it), so a child starved by a busy machine waits for a CPU instead
    of failing, and one that idles is cut off as fast as one that spins. A slice in which the
    tree was seen asleep counts as idle less the CPU the tree got in it, so one that computes
    between short sleeps is not taken for an idler, and, where one of its processes was
    blocked in the kernel (Usage.blocked), less the time the machine was stalled on memory or
    I/O in it (strays.machine_stalls): a page of the child's read back from the disk on a
    machine that thrashes is the machine's delay, as a starved child's wait for a CPU is, and
    such a child is waited for up to the clock's backstop. FrameTimeout, with why, past the limit or
    past BACKSTOP times it on the clock. While a child's usage cannot be read (no /proc, a
    sandbox that does not answer) the clock counts as its work ("clock"), and it is asked again
    at each look. `progress` is called whenever a look finds the child at work (the CLI's
    watchdog hears that the worker is not wedged).
    Past the backstop, a child that has had its share of a CPU all the same is waited for on
    (see STRETCH). `backstop_s` puts the clock's backstop elsewhere than BACKSTOP times the
    limit; `idle_s` the allowance of sleep elsewhere than the limit (a wait for a cap on CPU
    time: the CPU left before the cap is no measure of how long a process may be kept from
    running, stopped or blocked on the disk). A look that came back late (LATE_S) saw the child
    asleep at its end only: the time this process was kept from looking is no evidence of what
    the child did, and counts neither as its sleep nor toward the clock's backstop.
    `files_most`: the most open files the tree may hold while the machine's table of them is
    crowded (strays.files_held_most() for a child running candidate code, from its word that
    its setup is done, by which it is dumpable; a wait on the grader's own processes asks none:
    a worker holds its sandboxes' trees too), past which the wait ends (FrameTimeout "files");
    as it does for a tree that keeps its files out of this process's sight meanwhile
    (Usage.hidden: FrameTimeout "hidden")."""
    began = time.monotonic()
    backstop = BACKSTOP * limit_s if backstop_s is None else backstop_s
    first = last = child.usage()
    unread = 0.0  # clock seconds before the usage could be read, counted as work
    idle = 0.0
    away = 0.0  # clock seconds in which this process was kept from looking (LATE_S)
    allowance = budget.left_s if budget else limit_s
    stalls = strays.machine_stalls()
    try:
        while True:
            now = time.monotonic()
            elapsed = now - began - away
            if first is None or last is None:
                left = limit_s - elapsed
                why: TimeoutWhy = "clock"
            else:
                cpu = unread + last.work_s - first.work_s
                idle_left = min(limit_s if idle_s is None else idle_s, allowance) - idle
                left = min(limit_s - cpu, idle_left)
                why = "cpu" if cpu >= limit_s else "idle" if idle_left <= 0 else "wall"
                if left > 0 and _starved(cpu - unread, elapsed, backstop):
                    left = 0.0
            if left <= 0:
                raise FrameTimeout(why)
            asked = min(SLICE_S, left)
            ready, _, _ = select.select([child.fd], [], [], asked)
            if ready:
                return left
            before, stalled_before = last, stalls
            last = child.usage() or last
            if files_most is not None and last is not None and last.files > files_most:
                raise FrameTimeout("files")
            if files_most is not None and last is not None and last.hidden:
                raise FrameTimeout("hidden")
            stalls = strays.machine_stalls()
            took = time.monotonic() - now
            away += max(0.0, took - asked - LATE_S)
            if first is None or before is None:
                first = last
                unread = time.monotonic() - began - away
            elif last is not None and last.runnable:
                progress()
            elif last is not None:
                seen = min(took, asked + LATE_S)
                machine = strays.stalled_s(stalled_before, stalls) if last.blocked else 0.0
                idle += max(0.0, seen - machine - (last.work_s - before.work_s))
    finally:
        if budget:
            budget.left_s -= idle


END_GRACE_S = 1.0
"""How much work (CPU time, or sleep) a child may spend ending once the judge asks no more of
it: a child ends at once (os._exit after its last frame), so one still there after this much
is code that wrote a last frame of its own and went on, and it is killed."""


def ended_by_itself(pid: int) -> bool:
    """Wait for the child `pid` to end by itself within END_GRACE_S of its work (wait_readable's
    rules: a starved child is waited for up to the clock's backstop); False when it has not
    (then it is the caller's to kill), never waiting without end. The child is not reaped."""
    try:
        fd = os.pidfd_open(pid)
    except OSError:  # gone already; or no pidfd here (before Linux 5.3): waited for as ever
        return True
    try:
        wait_readable(TreeWatch(fd, pid), END_GRACE_S, files_most=strays.files_held_most())
    except FrameTimeout:
        return False
    finally:
        os.close(fd)
    return True


def _starved(cpu_s: float, elapsed_s: float, backstop_s: float) -> bool:
    """Whether a wait that has lasted `elapsed_s` on the clock, in which the child got `cpu_s`
    of CPU time, is over for want of CPU: past the backstop for a child getting less than a
    1 / (BACKSTOP * STRETCH) share since the wait began, past STRETCH backstops for any."""
    return elapsed_s >= backstop_s * STRETCH or \
        (elapsed_s >= backstop_s and cpu_s < elapsed_s / (BACKSTOP * STRETCH))


def files_most(child: Child) -> int | None:
    """The most open files `child`'s tree may hold (wait_readable's `files_most`): none asked
    before its setup is done, as no candidate code has run and the child, forked from an
    undumpable process, may not yet be dumpable (child.countable)."""
    return strays.files_held_most() if child.setup.done else None


def next_frame(child: Child, timeout_s: float, budget: IdleBudget | None = None,
               progress: Callable[[], None] = lambda: None) -> dict[str, Any] | None:
    """The child's next frame, within `timeout_s` of its work (see wait_readable), each piece
    of a frame larger than a pipe waited for the same way (a child starved while it writes one
    is waited for, not cut off by the clock); a malformed one reads as an error frame, not a
    worker crash. The child's first frame, about its own setup, is taken into `child.setup`
    on the way: None for a child whose setup failed, as for one that ended without a word
    (`child.end` says which)."""
    left = timeout_s

    def wait(fd: int) -> None:
        nonlocal left
        left = max(wait_readable(child, left, budget, progress, files_most=files_most(child)),
                   SLICE_S)

    while True:
        try:
            frame = read_frame(child.fd, wait)
        except FrameTimeout:
            raise
        except Exception as exc:  # noqa: BLE001 - whatever the child wrote, the worker goes on
            return dict(probe_frame("error", message=f"unreadable result from the child "
                                    f"process: {exc}"))
        if frame is not None and not isinstance(frame, dict):
            return dict(probe_frame("error", message="unreadable result from the child process"))
        if frame is None or child.setup.done:
            return frame
        if frame["kind"] == "setup_failed":
            child.setup.failure = frame["message"] or "its setup failed"
            return None
        if frame["kind"] != "set_up":
            return dict(probe_frame("error", message="the child process sent a result before "
                                    "it said it was set up: not believed"))
        child.setup.done = True


class ForkedChild:
    """A child forked from this worker (practice mode, and every baseline): its pipe, and the
    kill of everything it started once it ends."""

    def __init__(self, job: ChildJob, helpers: ModuleType, sweep: bool = True) -> None:
        # Imported here, before the fork, once per process: the CLI, which only asks whether
        # a sandbox can be made (grader.runner.sandbox imports this module), loads no numpy.
        from grader.runner.child import ready_for, run_child

        ready_for(job.spec)
        self.sweep = sweep
        self.setup = Setup(beside_strays=sweep and strays.strays_left())
        read_fd, write_fd = os.pipe()
        self.orders = Orders(job)
        worker_pid = os.getpid()
        try:
            pid = strays.fork()
        except (strays.NoProcessLeft, strays.LimitsChanged) as exc:
            for fd in (read_fd, write_fd):
                os.close(fd)
            self.orders.handed_over()
            self.orders.close()
            if isinstance(exc, strays.LimitsChanged) or exc.by_the_code:
                raise ChildrenLost(f"not run: {exc}") from None
            raise ChildrenLost(f"not run: {TOO_BUSY.format(what='this')} ({exc})",
                               status="undecided") from None
        if pid == 0:
            run_child(write_fd, self.orders.child_fd, job.spec, helpers, worker_pid)
        os.close(write_fd)
        self.orders.handed_over()
        self.pid, self.fd = pid, read_fd

    def release(self) -> None:
        self.orders.release()

    def last_words(self) -> tuple[str, str]:
        """(what a hung child printed since its last frame, the candidate's line it was on),
        asked for before it is killed; empty when it cannot answer within the grace (stuck in
        C code, or its handler replaced)."""
        return ask_last_words(lambda: os.kill(self.pid, LAST_WORDS_SIGNAL), self.fd)

    def usage(self) -> strays.Usage | None:
        """With sweep False a stray is not this child's: another child of the worker lives.
        A process of the child's found stopped is continued (strays.work_usage)."""
        if self.sweep:
            return strays.work_usage(self.pid)
        return strays.tree_usage(self.pid, resume=True)

    def end(self, kill: bool) -> Ended:
        """Reap the child (killed first if asked), then every process it left behind (not for
        a child made with sweep False, see fork_spawner)."""
        os.close(self.fd)
        self.orders.close()
        kill = kill or not ended_by_itself(self.pid)
        how, cpu_s, here = strays.reap(self.pid, kill, sweep=self.sweep)
        return Ended(how, cpu_s, SHORT_OF_MEMORY if here else self.setup.machine(how))


def ask_last_words(ask: Callable[[], None], fd: int) -> tuple[str, str]:
    """(what a hung child printed since its last frame, the candidate's line it was on), once
    `ask` has signalled it; empty when it cannot answer within the grace (stuck in C code, or
    its handler replaced)."""
    try:
        ask()
        frame = read_frame(fd, until(time.monotonic() + LAST_WORDS_GRACE_S))
    except Exception:  # noqa: BLE001 - gone, silent or garbled: nothing to add
        return "", ""
    if isinstance(frame, dict) and frame.get("kind") == "last_words":
        return str(frame.get("output", "")), str(frame.get("where", ""))
    return "", ""


def fork_spawner(round_: Round, sweep: bool = True) -> Spawn:
    """Children forked from this worker, with the round's probe helpers already imported.
    `sweep` False: ending one kills nothing else, so that one can run while a child of the
    candidate's lives (the kill of strays would take that child too); only for children that
    run no candidate code and start no process."""
    helpers = probe_helpers(round_)
    return lambda job: ForkedChild(job, helpers, sweep)


def ready_to_fork() -> None:
    """Import and set up, in a process that forks the children that run probes (the worker, a
    sandbox's executor: both call this), what any probe's child would otherwise load on first
    use. A module a child loads is paid by that child, and where one parent has it and the
    other not, a measured run pays for it on one side alone: numpy loads numpy.random on first
    use, which every timed run's inputs draw from (library.fresh_cases), and it cost each
    sandboxed child of the candidate's about 10 ms of CPU and 2,300 page faults that the
    reference's, forked from a worker whose judge had loaded it, never paid (a sandboxed
    reference measured 1.16 times itself at the median; with this, 1.05, as without a
    sandbox). The probes need torch in the numpy flavor too (gradcheck compares with it)."""
    import numpy.random  # noqa: F401 - loaded once here, inherited by every forked child
    import torch

    from grader.probes.autograd import autodiff_watch

    torch.set_num_threads(1)
    autodiff_watch()


_warmed: set[str] = set()


def probe_helpers(round_: Round) -> ModuleType:
    """The round's probes.py, imported in the process that forks the children (the worker, a
    sandbox's executor), and its `warm()`, where it has one, run there once: what every child
    would otherwise import or set up on first use (torch's first optimizer imports
    torch._dynamo, about a second) is then inherited by each instead of paid by each."""
    helpers = load_module(round_, "probes")
    warm = getattr(helpers, "warm", None)
    if callable(warm) and helpers.__name__ not in _warmed:
        _warmed.add(helpers.__name__)
        warm()
    return helpers
