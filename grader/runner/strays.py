"""Processes that candidate code started and left behind, found and killed.

A child runs in a process group of its own, but code under test can leave it: `setsid`, a double
fork, `Popen(start_new_session=True)`. On Linux the process that forks children declares itself a
child subreaper, so every process orphaned below it is handed to it rather than to init, and
after each child ends it kills every child it still has, until none is left. Elsewhere (macOS)
the process-group kill at a timeout is all there is.
"""

from __future__ import annotations

import ctypes
import errno
import functools
import gc
import os
import re
import resource
import signal
import time
from collections.abc import Callable, Collection
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple, TypeVar

from grader.runner import memory

PR_SET_DUMPABLE = 4
PR_SET_CHILD_SUBREAPER = 36
SWEEP_LIMIT_S = 2.0
_own: set[int] = set()
_adopting = False


def own(pid: int) -> None:
    """`pid` is a child this process started for itself (a sandbox), not a stray."""
    _own.add(pid)


def disown(pid: int) -> None:
    _own.discard(pid)


def become_subreaper(adopt: bool = True) -> bool:
    """Adopt every orphan below this process (or stop, with adopt False); False where the
    system has no such thing."""
    global _adopting
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        done = bool(libc.prctl(PR_SET_CHILD_SUBREAPER, int(adopt), 0, 0, 0) == 0)
    except (OSError, AttributeError):
        return False
    _adopting = adopt and done
    return done


def set_dumpable(dumpable: bool) -> None:
    """Make this process (and the children it forks) undumpable, or dumpable again: a process
    of the same user without CAP_SYS_PTRACE, the code under test, may neither ptrace an
    undumpable one nor open its /proc/<pid>/fd, map_files, mem or environ. Linux only;
    elsewhere nothing changes."""
    try:
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_DUMPABLE, int(dumpable), 0, 0, 0)
    except (OSError, AttributeError):
        pass


SHORT_OF = (errno.EAGAIN, errno.ENFILE, errno.ENOMEM)
"""What the kernel answers where the machine ran short of a process, a file (its table of open
files full) or memory: for a moment, or while a neighbour holds it; no fault of the grader's
or of the code it grades."""
_SHORT_WORDS = re.compile("|".join([re.escape(os.strerror(code)) for code in SHORT_OF]
                                   + [rf"\bError {code}\b" for code in SHORT_OF]))


def machine_short(said: str) -> bool:
    """Whether `said` (a program's error output, a failure's text) tells of the machine running
    short (SHORT_OF): after "Can't fork", "Can't create signalfd" or the like, or as the
    dynamic loader says it, which cannot name an error before libc is loaded ("Error 23")."""
    return _SHORT_WORDS.search(said) is not None


FORK_WAITS_S = (0.05, 0.1, 0.2, 0.4, 0.8, 1.6)
"""How long fork waits before each new try while the machine has no process to give (EAGAIN:
its process table, or this user's share of it, full for a moment, as while a sweep kills a
fork loop's strays): 3 s in all, then NoProcessLeft."""


_PROCESS_LIMIT = resource.getrlimit(resource.RLIMIT_NPROC)
"""This process's limit on processes when it started (one that kept its limits, keep_limits,
compares with those instead): code under test (the same user) can lower it with prlimit, and a
fork refused under a lowered one is that code's doing."""


class NoProcessLeft(OSError):
    """No process could be forked: the process table stayed full (see FORK_WAITS_S).
    `by_the_code`: processes the code under test left behind outlived the sweeps meanwhile,
    or this process's limit on processes was lowered since it started (the code, not the
    machine, refused the fork)."""

    def __init__(self, message: str, by_the_code: bool) -> None:
        super().__init__(message)
        self.by_the_code = by_the_code


Started = TypeVar("Started")


def refused(exc: BaseException) -> bool:
    """Whether `exc` is the machine refusing a process or a thread for want of one (EAGAIN:
    BlockingIOError from fork and clone, and from a program that says its fork was refused;
    threading's RuntimeError)."""
    return isinstance(exc, BlockingIOError) or \
        (isinstance(exc, RuntimeError) and "can't start new thread" in str(exc))


def retried(start: Callable[[], Started]) -> Started:
    """start() (a fork, a program or a thread this process starts), tried again after each of
    FORK_WAITS_S while the machine refuses it for want of processes (see `refused`), the
    strays of earlier children swept each time (a fork loop's may be what fills the table);
    then NoProcessLeft. A table full for a moment is the machine's, not the code's, and not
    the grader's failure."""
    for wait in FORK_WAITS_S:
        try:
            return start()
        except (BlockingIOError, RuntimeError) as exc:
            if not refused(exc):
                raise
            kill_all()
            time.sleep(wait)
    try:
        return start()
    except (BlockingIOError, RuntimeError) as exc:
        if not refused(exc):
            raise
        lowered = resource.getrlimit(resource.RLIMIT_NPROC) != \
            _kept.get("RLIMIT_NPROC", _PROCESS_LIMIT)
        left = lowered or strays_left()
        why = ("the grader's limit on processes was lowered" if lowered else
               "filled by processes the code under test left behind" if left else "")
        raise NoProcessLeft("no process could be started: the process table stayed full"
                            + (f" ({why})" if why else ""), left) from None


LIMITS = {name: getattr(resource, name) for name in dir(resource) if name.startswith("RLIMIT_")}
_kept: dict[str, tuple[int, int]] = {}


class LimitsChanged(OSError):
    """This process's resource limits are no longer those it kept (keep_limits), and could not
    all be set back: code under test changed them (prlimit on its parent needs only the same
    user), and every child forked now would inherit the change."""


def keep_limits() -> None:
    """Keep this process's resource limits as they are now (once its own are set): the limits
    every child it forks starts from (see fork); and its scheduling (see _scheduling_as_kept)."""
    _kept.update({name: resource.getrlimit(number) for name, number in LIMITS.items()})
    global _kept_scheduling
    _kept_scheduling = _Scheduling.now()


_PR_SET_TIMERSLACK, _PR_GET_TIMERSLACK = 29, 30


@dataclass(frozen=True)
class _Scheduling:
    """A process's scheduling as the kernel keeps it: its nice value, policy and priority,
    CPUs, the killer's adjustment, its timer slack and its session's autogroup nice (None
    where one cannot be read); and its core dump filter, which is no scheduling but is as
    writable from outside and kept across children (a store code could leave for the next
    child, where it runs as root: the red team's)."""

    nice: int
    policy: tuple[int, int]
    cpus: frozenset[int]
    oom_score_adj: str | None
    timerslack: int
    autogroup: str | None
    coredump_filter: str | None = None

    @classmethod
    def now(cls) -> _Scheduling:
        said = _proc_self("autogroup")
        return cls(os.getpriority(os.PRIO_PROCESS, 0),
                   (os.sched_getscheduler(0), os.sched_getparam(0).sched_priority),
                   frozenset(os.sched_getaffinity(0)), _proc_self("oom_score_adj"),
                   _libc().prctl(_PR_GET_TIMERSLACK, 0, 0, 0, 0),
                   said.rsplit(" ", 1)[-1] if said and " nice " in said else None,
                   _proc_self("coredump_filter"))


_kept_scheduling: _Scheduling | None = None


@functools.cache
def _libc() -> ctypes.CDLL:
    return ctypes.CDLL(None, use_errno=True)


def _proc_self(name: str) -> str | None:
    try:
        return Path(f"/proc/self/{name}").read_text().strip()
    except OSError:
        return None


def _scheduling_as_kept() -> None:
    """Set back, as far as this process may, what code under test changed of its scheduling
    from the outside, where no filter reaches: its session's autogroup nice (a child shares
    the session, and /proc/self/autogroup is its own to write), its killer adjustment and timer
    slack (written through /proc/<parent>/ where the code runs as root). A setting it cannot
    set back (an unprivileged process may raise its nice value, never lower it) slows its
    grading and changes no verdict: CPU time is what is judged."""
    kept = _kept_scheduling
    if kept is None:
        return
    now = _Scheduling.now()
    steps: list[tuple[bool, Callable[[], object]]] = [
        (now.nice != kept.nice, lambda: os.setpriority(os.PRIO_PROCESS, 0, kept.nice)),
        (now.policy != kept.policy,
         lambda: os.sched_setscheduler(0, kept.policy[0], os.sched_param(kept.policy[1]))),
        (now.cpus != kept.cpus, lambda: os.sched_setaffinity(0, kept.cpus)),
        (now.timerslack != kept.timerslack,
         lambda: _libc().prctl(_PR_SET_TIMERSLACK, kept.timerslack, 0, 0, 0)),
        (kept.oom_score_adj is not None and now.oom_score_adj != kept.oom_score_adj,
         lambda: Path("/proc/self/oom_score_adj").write_text(str(kept.oom_score_adj))),
        (kept.autogroup is not None and now.autogroup != kept.autogroup,
         lambda: Path("/proc/self/autogroup").write_text(str(kept.autogroup))),
        (kept.coredump_filter is not None and now.coredump_filter != kept.coredump_filter,
         # read as hex digits with leading zeros, which the kernel would parse as octal
         lambda: Path("/proc/self/coredump_filter").write_text(f"0x{kept.coredump_filter}"))]
    for changed, set_back in steps:
        if changed:
            try:
                set_back()
            except (OSError, ValueError):
                pass


def _limits_as_kept() -> None:
    """Set back each limit that is no longer as kept; LimitsChanged, naming them, for those
    that cannot be (a hard limit lowered: raising it takes a privilege)."""
    stuck = []
    for name, limits in _kept.items():
        if resource.getrlimit(LIMITS[name]) != limits:
            try:
                resource.setrlimit(LIMITS[name], limits)
            except (ValueError, OSError):
                stuck.append(name)
    if stuck:
        raise LimitsChanged(f"the code under test changed the limits of the process that "
                            f"starts its children ({', '.join(stuck)})")


def limits_set_back() -> bool:
    """Whether this process's limits are as kept (keep_limits), or have been set back: False
    where code under test changed one that cannot be (the process then serves no one else)."""
    try:
        _limits_as_kept()
    except LimitsChanged:
        return False
    return True


def strays_left() -> bool:
    """Whether processes the code under test left behind are alive here (orphans this process
    adopted that outlived the sweeps: a fork loop racing them); what happens to the next child
    before it is set up may then be their doing."""
    return _adopting and bool(children() - _own)


def fork() -> int:
    """os.fork(), with every object alive at the fork left out of the child's garbage
    collections (gc.freeze): a child that allocates would otherwise walk the worker's million
    objects (torch's among them) in each full collection, and write to every page it walks,
    copying it. The parent's objects are handed back to its collector once the fork is done.
    A fork refused for want of processes is tried again (`retried`). The limits kept
    (keep_limits) are set back first, so that a child's setup never starts from limits the
    code under test lowered; LimitsChanged where they cannot be. Its scheduling is set back
    too, as far as it may be (_scheduling_as_kept)."""
    _limits_as_kept()
    _scheduling_as_kept()
    return retried(_fork_once)


def _fork_once() -> int:
    oom_kills = memory.oom_kills()
    gc.freeze()
    try:
        pid = os.fork()
    except BlockingIOError:
        gc.unfreeze()
        raise
    if pid:
        gc.unfreeze()
        _oom_kills_at_fork[pid] = oom_kills
    return pid


_oom_kills_at_fork: dict[int, tuple[int | None, ...]] = {}
"""The kernel's counts of out-of-memory kills (memory.oom_kills) as each live child was forked:
`reap` tells a child the kernel ended for want of memory by them."""

NEVER_FORKED = "was never started: no process could be made for it"
"""How a sandbox's child ended that its executor could not fork (the machine's table full past
the retries, none of the code's processes left): it said so in the child's place (a
"setup_failed" frame), so its check is the machine's, not the code's."""

OUT_OF_MEMORY = "was ended by the kernel's out-of-memory killer"
"""How a child ended that died of SIGKILL while the kernel counted an out-of-memory kill in its
cgroup (memory.killed_for_memory): the memory that ran out was its sandbox's, its container's
or the machine's (children.Ended says which it was where that can be told)."""


def children(pid: int | None = None) -> set[int]:
    """The live children of `pid` (this process by default), from /proc; empty without it."""
    pid = os.getpid() if pid is None else pid
    found: set[int] = set()
    try:
        tasks = list(Path(f"/proc/{pid}/task").iterdir())
    except OSError:
        return found
    for task in tasks:
        try:
            found.update(int(c) for c in (task / "children").read_text().split())
        except (OSError, ValueError):
            continue
    return found


def stat_fields(pid: int) -> list[str] | None:
    """The fields of /proc/<pid>/stat after the command's name (which may hold spaces and
    parentheses), the state first; None when `pid` is gone or there is no /proc."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return stat[stat.rindex(")") + 2:].split()


def held_after_resuming(pid: int) -> bool:
    """Continue `pid` where a signal stopped it (SIGSTOP from a person, a tool that pauses
    processes, or code under test); whether it stays held all the same: under a tracer's stop,
    which only its tracer ends (from /proc)."""
    fields = stat_fields(pid)
    if fields is not None and fields[0] == "T":
        _continue(pid)
    return fields is not None and fields[0] == "t"


_STATE_WORDS = {"R": "running", "S": "asleep", "D": "blocked in the kernel", "T": "stopped",
                "t": "stopped by a tracer", "Z": "ended, not reaped", "I": "idle"}


def describe_tree(pid: int) -> str:
    """What each process of `pid`'s tree is doing, from /proc ("812 asleep in do_select, 830
    stopped"): what a watchdog says of a tree it gives up on, so that a silence can be traced
    to the process that kept it. Empty without /proc or once `pid` is gone."""
    found, pending = [], [pid]
    while pending:
        current = pending.pop(0)
        fields = stat_fields(current)
        if fields is None:
            continue
        state = fields[0]
        try:
            where = Path(f"/proc/{current}/wchan").read_text().strip()
        except OSError:
            where = ""
        words = _STATE_WORDS.get(state, state)
        found.append(f"{current} {words}{f' in {where}' if where not in ('', '0') else ''}")
        pending.extend(sorted(children(current)))
    return ", ".join(found)


@dataclass(frozen=True)
class Usage:
    """What a process tree is doing: the CPU seconds it has been charged (its processes' own,
    and those of the children they reaped), and whether any of its processes is at work
    (running or waiting for a CPU at the reader's priority, or frozen with its cgroup) rather
    than asleep."""

    cpu_s: float
    runnable: bool
    frozen: bool = False
    """Whether any of its processes is held by its cgroup's freezer (counted as at work too)."""
    unseen_s: float = 0.0
    """CPU seconds a cgroup counted for the tree's work beyond `cpu_s`: processes the kernel
    reaped unasked (their parent ignores SIGCHLD), whose time reaches no parent. A wait counts
    it as work (work_s); a measurement, which forbids new processes, never does."""
    files: int = 0
    """How many open files its processes hold (descriptors, and mappings of files, which keep
    a file open after its descriptor is closed), counted only while the machine's table of open
    files is crowded (files_crowded); 0 otherwise."""
    hidden: bool = False
    """Whether /proc refused to show the files of one of its processes while they were counted
    (files_of's None): a process that made itself undumpable, or exec'd a file it cannot
    read, keeps them out of an ordinary user's sight."""
    blocked: bool = False
    """Whether any of its processes is in uninterruptible sleep ("D") and not frozen: waiting
    inside the kernel, for a page read back from the disk or memory reclaimed (the machine's
    doing, where the machine is stalled on memory or I/O: see machine_stalls), or for
    something the code chose (a vfork that never returns)."""

    @property
    def work_s(self) -> float:
        """All the CPU time known to have gone to the tree's work (cpu_s and unseen_s)."""
        return self.cpu_s + self.unseen_s


_AT_WORK = ("R",)
"""The states of a process at work: running, or waiting for a CPU (what a busy machine does to
it). Not the uninterruptible sleep "D": code can sit in it for as long as it likes at no CPU
cost (a vfork that never returns, membarrier in a loop), and a wait counted as work there would
reach the clock's backstop as a starved one and leave its check undecided, not timed out. A wait
counts the time the machine was stalled on memory or I/O while a process was in it as the
machine's, not as sleep (Usage.blocked)."""


_BLOCKED = "D"

STALLS = ("memory", "io")
"""The resources whose stalls the kernel counts (/proc/pressure) that leave a process in
uninterruptible sleep through no choice of its own: its pages evicted and read back (a machine
out of memory thrashes), the disk busy with others' work."""


def machine_stalls() -> tuple[float, ...] | None:
    """Seconds since boot in which some task of this machine was stalled on each of STALLS
    (the kernel's pressure stall information: the `some` line's total, in microseconds); None
    where the kernel keeps none (before Linux 4.20, or booted with psi=0)."""
    totals = []
    for resource_ in STALLS:
        try:
            line = Path(f"/proc/pressure/{resource_}").read_text().splitlines()[0]
            totals.append(int(line.rsplit("total=", 1)[1]) / 1e6)
        except (OSError, IndexError, ValueError):
            return None
    return tuple(totals)


FILES_CROWDED = 0.5
"""How full the machine's table of open files (/proc/sys/fs/file-nr) may get before each look at
a tree counts the files it holds: the table is the whole machine's, a sandbox's processes
(however capped in descriptors) can keep files open through mappings of them, and a full table
refuses every other process a file (a classmate's sandbox, its import)."""
FILES_SHARE = 32
"""What part of the machine's table of open files one child's tree (a sandbox, in a sandbox)
may hold while the table is crowded: sixteen sandboxes at once then hold half of it at most,
whatever the machine's size (the kernel sizes the table by its memory)."""
FILES_HELD_LEAST = 1 << 12
"""The fewest open files a tree is allowed, however small the machine's table: a grading's child
holds a few hundred (its descriptors, and the libraries torch and numpy map)."""


@functools.cache
def files_held_most() -> int:
    """The most open files one child's tree may hold while the machine's table is crowded: a
    FILES_SHARE-th of the table (131,072 where /proc does not say its size), never fewer than
    FILES_HELD_LEAST."""
    try:
        table = int(Path("/proc/sys/fs/file-max").read_text())
    except (OSError, ValueError):
        table = FILES_SHARE << 17
    return max(FILES_HELD_LEAST, table // FILES_SHARE)


def files_crowded() -> bool:
    """Whether the machine's table of open files is more than FILES_CROWDED full; False where
    /proc does not say."""
    try:
        allocated, _, most = Path("/proc/sys/fs/file-nr").read_text().split()[:3]
        return int(allocated) > FILES_CROWDED * int(most)
    except (OSError, ValueError):
        return False


_ENDED = ("Z", "X")
"""The states of a process whose thread has ended: a zombie, or dead."""
_PF_EXITING = 0x4
"""The kernel's flag (/proc/<pid>/stat's ninth field) on a thread that has begun to exit: its
memory is being torn down (for tens of milliseconds where it held a gigabyte), and meanwhile
its /proc/<pid>/fd and map_files are root's, no ordinary user's to read."""


def _ending(fields: list[str]) -> bool:
    """Whether the thread whose stat_fields these are has ended or begun to exit."""
    return fields[0] in _ENDED or bool(int(fields[6]) & _PF_EXITING)


def files_of(pid: int, fields: list[str] | None = None) -> int | None:
    """The open files `pid` (its stat_fields, where read) holds: its descriptors and its
    mappings of files (each can hold a file of its own open); 0 where /proc does not show them
    or `pid` is gone; None where /proc will not show them to this process (an undumpable
    process of a grader that runs as an ordinary user: its /proc/<pid>/fd and map_files are
    then root's). A process whose first thread has ended or is exiting (a zombie, or a thread
    whose memory is being torn down, before or while it is looked at) while another of its
    threads runs holds its files through that one, and shows them only under it; one that has
    none left is letting them go (its /proc/<pid>/fd, meanwhile, no ordinary user's to
    read)."""
    if fields is None or not _ending(fields):
        count = 0
        for kind in ("fd", "map_files"):
            try:
                count += len(os.listdir(f"/proc/{pid}/{kind}"))
            except PermissionError:
                fields = stat_fields(pid)
                if fields is not None and not _ending(fields):
                    return None
                break
            except OSError:
                pass
        else:
            return count
    where = _live_task(pid)
    if where is None:
        return 0
    try:
        count = len(os.listdir(f"{where}/fd"))
        with open(f"{where}/maps") as maps:
            # A thread has no map_files of its own: its mappings of files are the lines of its
            # maps that name an inode.
            return count + sum(line.split(maxsplit=5)[4] != "0" for line in maps)
    except PermissionError:
        return None if _live_task(pid) == where else 0
    except (OSError, IndexError):
        return 0


def _live_task(pid: int) -> str | None:
    """The /proc folder of a thread of `pid` that has neither ended nor begun to exit; None
    where none is left."""
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return None
    for task in tasks:
        try:
            stat = Path(f"/proc/{pid}/task/{task}/stat").read_text()
        except OSError:
            continue
        if not _ending(stat[stat.rindex(")") + 2:].split()):
            return f"/proc/{pid}/task/{task}"
    return None


def stalled_s(before: tuple[float, ...] | None, after: tuple[float, ...] | None) -> float:
    """The seconds between two readings of machine_stalls in which the machine was stalled on
    one of STALLS (the longest of them: stalls on memory and on I/O overlap); 0 where either
    reading is missing."""
    if before is None or after is None:
        return 0.0
    return max(0.0, *(b - a for a, b in zip(before, after, strict=True)))


def _frozen(pid: int, state: str) -> bool:
    """Whether `pid` (in `state`) is held by its cgroup's freezer: a container paused (`docker
    pause`), a unit frozen by systemd, which the kernel shows asleep ("D" or "S"). Kept from
    running by the machine, as a starved process is, not asleep by its own choice: a Usage
    counts it as at work. Code in a sandbox cannot freeze itself (the cgroup files are not its
    to write). From its files (v1's freezer.state, v2's cgroup.events); False where they cannot
    be read (none are mounted in a sandbox: the worker looks from outside)."""
    if state not in ("D", "S"):
        return False
    for controller, folder in memory.cgroup_folders(str(pid)):
        try:
            if controller == "freezer":
                return (folder / "freezer.state").read_text().strip() in ("FROZEN", "FREEZING")
            if controller == "":
                return "frozen 1" in (folder / "cgroup.events").read_text().splitlines()
        except OSError:
            continue
    return False


@dataclass(frozen=True)
class _Priority:
    """What sets a process's share of a CPU that it can lower itself, without privilege: its
    nice, its policy (the idle one), and the nice of its autogroup (a session of its own,
    `setsid`, then /proc/self/autogroup: the whole group's share, where the kernel groups
    tasks by session)."""

    nice: int
    policy: int
    group_nice: int

    @classmethod
    def of(cls, pid: int) -> _Priority:
        """`pid`'s priority; the lowest there is where it cannot be read (a sandbox or
        container that refuses the calls), which no process then runs below."""
        try:
            return cls(os.getpriority(os.PRIO_PROCESS, pid),
                       os.sched_getscheduler(pid) & ~_RESET_ON_FORK, _group_nice(pid, 0))
        except OSError:
            return cls(19, os.SCHED_IDLE, 19)

    def outranks(self, pid: int, fields: list[str]) -> bool:
        """Whether the process `pid` (its stat `fields`) runs below this priority (the
        reader's): a higher nice, the idle policy where the reader's is not, or a higher
        autogroup nice. Such a process gave its CPU away itself, so the time it then waits for
        one is its own, as sleep is, not the machine's starving it: counted as asleep, a
        process that deprioritized itself beside a busy core times out as one that sleeps
        does, while on a quiet machine it gets its CPU and loses nothing. A priority set on the
        whole grading (`nice grader ...`, a renice of every process) is the reader's too."""
        return int(fields[16]) > self.nice or \
            (int(fields[38]) == os.SCHED_IDLE != self.policy) or \
            _group_nice(pid, self.group_nice) > self.group_nice


_RESET_ON_FORK = getattr(os, "SCHED_RESET_ON_FORK", 0x40000000)


def _group_nice(pid: int, unknown: int) -> int:
    """The nice of `pid`'s autogroup ("/autogroup-41 nice 19"); `unknown` where there is none
    to read (no autogroups in this kernel, or `pid` gone)."""
    try:
        return int(Path(f"/proc/{pid}/autogroup").read_text().split()[-1])
    except (OSError, ValueError, IndexError):
        return unknown


def tree_usage(pid: int, resume: bool = False, files_below: int | None = None) -> Usage | None:
    """`pid`'s Usage with all its descendants, from /proc; None when `pid` is gone or there
    is no /proc. What tells a process starved by a busy machine (runnable, little CPU, at the
    priority of the process reading: see _Priority.outranks) from one that idles (asleep). `resume`:
    each process of the tree found stopped by a signal is continued on the way (see
    work_usage). `files_below`: count the open files of that process's descendants only (a
    sandbox's code, below its executor, which is the grader's and undumpable); NO_PROCESS:
    of none."""
    tick = os.sysconf("SC_CLK_TCK")
    reader = _Priority.of(os.getpid())
    crowded = files_crowded()
    cpu, runnable, frozen, blocked, first = 0.0, False, False, False, True
    pending = [(pid, files_below is None)]
    files, hidden = 0, False
    while pending:
        current, counted = pending.pop()
        fields = stat_fields(current)
        if fields is None:
            if first:
                return None
            continue
        first = False
        held = _frozen(current, fields[0])
        frozen = frozen or held
        blocked = blocked or (fields[0] == _BLOCKED and not held)
        runnable = runnable or frozen or (fields[0] in _AT_WORK
                                          and not reader.outranks(current, fields))
        if resume and fields[0] == "T":
            _continue(current)
        cpu += sum(int(f) for f in fields[11:15]) / tick  # utime, stime, cutime, cstime
        # Counted only while crowded, and only until past the most one tree may hold: a
        # process can map tens of thousands of files, and a look must stay a look.
        if counted and crowded and files <= files_held_most() and not hidden:
            held_files = files_of(current, fields)
            hidden = held_files is None
            files += held_files or 0
        below = counted or current == files_below
        pending.extend((child, below) for child in children(current))
    return Usage(cpu, runnable, frozen, files=files, hidden=hidden, blocked=blocked)


NO_PROCESS = 0
"""A pid no process has: tree_usage's `files_below` for a tree none of whose files count."""


def _continue(pid: int) -> None:
    try:
        os.kill(pid, signal.SIGCONT)
    except OSError:
        pass  # gone, or not ours to signal: it stays as it is


def work_usage(pid: int) -> Usage | None:
    """The Usage of everything that works for the child `pid`: its tree, and every orphan it
    left that this process adopted (live, or ended and not yet reaped: a grandchild that did
    the work and exited). What a CPU limit or cap reads while the child runs; `reap` then
    charges the same processes once they are gone.
    Each of those processes found stopped by a signal (SIGSTOP from a person, a tool that
    pauses processes, or the code itself) is continued: the grader wants the processes that do
    its work running, and a look is how often it sees them. The look counts a stopped process
    as asleep, so code that stops itself again and again still spends its allowance of sleep
    and times out, while a stop from outside costs at most a look of it, however long it was
    meant to last. A process under a tracer's stop (a debugger) is left to its tracer."""
    found = tree_usage(pid, resume=True)
    if found is None or not _adopting:
        return found
    adopted = [u for u in (tree_usage(stray, resume=True) for stray in children() - _own - {pid})
               if u]
    return Usage(found.cpu_s + sum(u.cpu_s for u in adopted),
                 found.runnable or any(u.runnable for u in adopted),
                 found.frozen or any(u.frozen for u in adopted),
                 files=found.files + sum(u.files for u in adopted),
                 hidden=found.hidden or any(u.hidden for u in adopted),
                 blocked=found.blocked or any(u.blocked for u in adopted))


class Reaped(NamedTuple):
    """How a reaped child ended, in words, the CPU seconds its tree cost, and whether an
    out-of-memory kill was counted by a memory cgroup this process is in (`here`: see
    memory.rose_here) while it ran."""

    how: str
    cpu_s: float
    here: bool = False


def reap(pid: int, kill: bool, sweep: bool = True) -> Reaped:
    """End a child that ran candidate code (killed first if asked), then every process it left
    behind: how it ended, and the CPU seconds (user and system) the kernel charged the whole
    tree it started. The tree's time is what this process's reaped children cost across the
    reap: the child, whatever it waited for, and every orphan adopted here and killed by
    `kill_all` (a grandchild that did the work and was never reaped by the child is counted
    too). A process that reaps one child at a time, as the worker and the executor do, gets
    exactly that tree's time. `sweep` False: the child alone (one of the judge's own, which
    starts nothing), while another child lives that the sweep would kill."""
    before = _children_cpu_s()
    oom_kills = _oom_kills_at_fork.pop(pid, None)
    if kill:
        kill_child(pid)
    _, status, _ = os.wait4(pid, 0)
    if sweep:
        kill_all()
    how, here = describe_exit(status), False
    # A child killed here is described only where it had ended first (its pipe closed: the
    # kill makes sure), so a SIGKILL with a kill counted since its fork where it could have
    # been this child's (memory.killed_for_memory) is the kernel's.
    if os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGKILL and \
            oom_kills is not None and memory.killed_for_memory(oom_kills,
                                                               now := memory.oom_kills()):
        how, here = OUT_OF_MEMORY, memory.rose_here(oom_kills, now)
    return Reaped(how, max(0.0, _children_cpu_s() - before), here)


def _children_cpu_s() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def kill_all() -> None:
    """SIGKILL and reap every child of this process but its own (see `own`), again and again
    while new orphans arrive (a fork loop keeps adopting them here). Bounded: after
    SWEEP_LIMIT_S it gives up on what is left rather than hang the batch. A process that adopts
    no orphans cannot tell a stray from a child it started itself: it kills nothing."""
    if not _adopting:
        return
    deadline = time.monotonic() + SWEEP_LIMIT_S
    while time.monotonic() < deadline:
        found = children() - _own
        if not found:
            break
        for pid in found:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        _reap(found)


def kill_child(pid: int) -> None:
    """SIGKILL a child and its process group (the group it made for itself, see child.py)."""
    for kill in (os.killpg, os.kill):
        try:
            kill(pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass


def describe_exit(status: int) -> str:
    """A wait status in words, as the scorecard says how a process ended."""
    return describe_returncode(os.waitstatus_to_exitcode(status))


def describe_returncode(code: int) -> str:
    """A process's exit code (a signal's number, negated, where one ended it, as subprocess
    gives it) in describe_exit's words."""
    return describe_signal(-code) if code < 0 else f"exited with code {code}"


def describe_signal(number: int) -> str:
    """How a process killed by signal `number` ended, in describe_exit's words."""
    return f"killed by signal {signal.Signals(number).name}"


def _reap(pids: Collection[int]) -> None:
    for pid in pids:
        try:
            os.waitpid(pid, 0)
        except ChildProcessError:
            pass
