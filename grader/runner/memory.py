"""Whether the kernel ended a process for want of memory: a process of the grading killed by
the out-of-memory killer was ended by the machine (too little memory for all that runs on it,
or a container's limit), which says nothing about the code under test or about the grader.

The kernel counts its out-of-memory kills: in /proc/vmstat for the whole machine (memory
cgroups' own kills included) and, for the cgroup a process is in, in its memory.events (v2)
or memory.oom_control (v1), which is what a container with a memory limit sees. Nothing
records which process was killed where an unprivileged process can read it, so a process that
died of SIGKILL that the grader did not send, while its cgroup's count rose (the machine's,
where no cgroup's can be read), is taken for one of them (killed_for_memory)."""

from __future__ import annotations

import functools
from pathlib import Path

VMSTAT = Path("/proc/vmstat")
CGROUPS = Path("/sys/fs/cgroup")
_FILES = {"": ("memory.events.local", "memory.max"),
          "memory": ("memory.oom_control", "memory.limit_in_bytes")}
"""Where a memory cgroup counts its out-of-memory kills of its own processes (not of those in
cgroups below it, a sandbox's) and keeps its limit, by the controller named in /proc/self/cgroup
(v2's unified hierarchy names none)."""


def _field(path: Path, wanted: str) -> int | None:
    """A count from a file of "name value" lines (memory.events, memory.oom_control, vmstat)."""
    try:
        lines = path.read_text().splitlines()
    except OSError:
        return None
    for line in lines:
        name, _, value = line.partition(" ")
        if name == wanted and value.strip().isdigit():
            return int(value)
    return None


def _number(path: Path) -> int | None:
    try:
        text = path.read_text().strip()
    except OSError:
        return None
    return int(text) if text.isdigit() else None


V1_MARKS = ("memory.", "memory.memsw.")
"""v1's memory counters, each with its limit_in_bytes and max_usage_in_bytes (the high-water
mark): memory alone, and memory with swap."""


OOM_CHARGE_BYTES = 8 * 4096
"""The largest charge a memory cgroup's limit calls the out-of-memory killer for: 8 pages
(the kernel's costly order, 3; a larger one fails with ENOMEM and kills nothing). A charge that
did not fit under the limit therefore found the cgroup's usage above the limit less this, and
v1's high-water mark, which counts only what was charged, can end that far short of the limit
(code that grows pipe buffers or io_uring rings near its limit: 4 to 16 KiB short, in 9 of 34
runs of a review's)."""


def limit_reached(folder: Path) -> int | None:
    """How often the memory cgroup at `folder` ran out of memory at its own limit: v2's
    memory.events `oom` (the limit reached and nothing left to reclaim). v1 keeps no such
    count (its failcnt stays 0 wherever a swap limit is set beside the memory one, as a
    sandbox's is, on the kernels tried), so there 1 where a high-water mark has come within
    OOM_CHARGE_BYTES of its limit since reset_marks (a charge the limit refused could have
    been made there), else 0. None where the kernel says neither. A process in it that the
    out-of-memory killer ended while this stayed put was ended for memory that ran out above
    it: its container's, or the machine's."""
    events = _field(folder / "memory.events", "oom")
    if events is not None:
        return events
    marks = [(peak, limit) for counter in V1_MARKS
             if (peak := _number(folder / f"{counter}max_usage_in_bytes")) is not None
             and (limit := _number(folder / f"{counter}limit_in_bytes")) is not None]
    return int(any(peak > limit - OOM_CHARGE_BYTES for peak, limit in marks)) \
        if marks else None


def reset_marks(folder: Path) -> None:
    """Start v1's high-water marks afresh at the cgroup's usage now (limit_reached reads them
    in v1), as one child of a sandbox begins; nothing to do in v2, whose count only grows."""
    for counter in V1_MARKS:
        try:
            (folder / f"{counter}max_usage_in_bytes").write_text("0")
        except OSError:
            continue


@functools.cache
def _own_memory_cgroups() -> list[tuple[Path, str, str]]:
    """(folder, counter file, limit file) of each memory cgroup this process is in, read once:
    every fork reads the counters (a grading process stays in the cgroup it started in)."""
    return [(folder, *_FILES[controller]) for controller, folder in cgroup_folders("self")
            if controller in _FILES]


def cgroup_folders(process: str) -> list[tuple[str, Path]]:
    """(controller, folder) of each cgroup `process` ("self", or a pid) is in, from /proc (v2's
    one hierarchy as controller ""); none where /proc cannot say."""
    try:
        lines = Path(f"/proc/{process}/cgroup").read_text().splitlines()
    except OSError:
        return []
    found = []
    for line in lines:
        _, controllers, path = line.split(":", 2)
        for controller in controllers.split(",") if controllers else [""]:
            base = CGROUPS if controller == "" else CGROUPS / controller
            found.append((controller, base / path.lstrip("/")))
    return found


def oom_kills() -> tuple[int | None, ...]:
    """The kernel's counts of out-of-memory kills that cover this process: the machine's, and
    its cgroup's (each None where it cannot be read). Compare two readings with `rose`."""
    return (_field(VMSTAT, "oom_kill"),
            *(_field(folder / counter, "oom_kill") for folder, counter, _ in _own_memory_cgroups()))


def rose(before: tuple[int | None, ...], after: tuple[int | None, ...]) -> bool:
    """Whether any count read both times grew between the two readings."""
    return any(a is not None and b is not None and a > b
               for b, a in zip(before, after, strict=False))


def rose_here(before: tuple[int | None, ...], after: tuple[int | None, ...]) -> bool:
    """Whether a count of this process's own memory cgroups grew between two oom_kills
    readings: each counts the processes killed in that cgroup, this one's children among them,
    where the machine's (/proc/vmstat) counts every process anywhere, which a process that
    kills itself could time its death to."""
    return rose(before[1:], after[1:])


def killed_for_memory(before: tuple[int | None, ...], after: tuple[int | None, ...]) -> bool:
    """Whether a process started here that died of a SIGKILL nobody here sent, between two
    oom_kills readings, is taken for one the out-of-memory killer ended. It is in this
    process's memory cgroups (a child stays where it was forked), and the killer counts each
    kill in the victim's cgroup whichever limit ran out, the machine's included: where those
    counts can be read, one of them must have risen. The machine's count alone, where a
    cgroup's says no kill, counts a process elsewhere: one that watches it and kills itself as
    it rises, or is killed then by anything else, was not the killer's. Where no cgroup's count
    can be read, the machine's is all there is."""
    readable = any(a is not None and b is not None
                   for b, a in zip(before[1:], after[1:], strict=False))
    return rose_here(before, after) if readable else rose(before[:1], after[:1])


def kills_in(folder: Path) -> int | None:
    """How many of its processes the out-of-memory killer has ended, as the memory cgroup at
    `folder` counts them (v2 memory.events, v1 memory.oom_control: `oom_kill`); None where
    neither is there."""
    for counter, _ in _FILES.values():
        found = _field(folder / counter, "oom_kill")
        if found is not None:
            return found
    return None


def _meminfo_mib(field: str) -> int | None:
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith(f"{field}:"):
                return int(line.split()[1]) // 1024
    except (OSError, ValueError, IndexError):
        return None
    return None


def _cgroup_limit_mib() -> int | None:
    """The lowest memory limit of this process's cgroups, in MiB (None where none is set)."""
    limits = [found // (1024 * 1024) for folder, _, limit in _own_memory_cgroups()
              if (found := _number(folder / limit)) is not None]
    return min(limits, default=None)


def room() -> str:
    """How much memory there is, in words: a container's limit where it is below the machine's
    memory, else what the machine says it could give now."""
    limit, total = _cgroup_limit_mib(), _meminfo_mib("MemTotal")
    if limit is not None and (total is None or limit < total):
        return f"its memory limit is {limit} MiB"
    available = _meminfo_mib("MemAvailable")
    return "" if available is None else f"it has {available} MiB available now"
