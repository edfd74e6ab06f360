"""Processes that candidate code started and left behind, found and killed.

A child runs in a process group of its own, but code under test can leave it: `setsid`, a double
fork, `Popen(start_new_session=True)`. On Linux the process that forks children declares itself a
child subreaper, so every process orphaned below it is handed to it rather than to init, and
after each child ends it kills every child it still has, until none is left. Elsewhere (macOS)
the process-group kill at a timeout is all there is.
"""

from __future__ import annotations

import ctypes
import os
import signal
import time
from collections.abc import Collection
from pathlib import Path

PR_SET_CHILD_SUBREAPER = 36
SWEEP_LIMIT_S = 5.0


def become_subreaper(adopt: bool = True) -> bool:
    """Adopt every orphan below this process (or stop, with adopt False); False where the
    system has no such thing."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(PR_SET_CHILD_SUBREAPER, int(adopt), 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


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


def kill_all(keep: Collection[int] = ()) -> list[int]:
    """SIGKILL and reap every child of this process but `keep`, again and again while new
    orphans arrive (a fork loop keeps adopting them here); the pids killed. Bounded: after
    SWEEP_LIMIT_S it gives up on what is left rather than hang the batch."""
    killed: list[int] = []
    deadline = time.monotonic() + SWEEP_LIMIT_S
    while time.monotonic() < deadline:
        found = children() - set(keep)
        if not found:
            break
        for pid in found:
            try:
                os.kill(pid, signal.SIGKILL)
                killed.append(pid)
            except ProcessLookupError:
                pass
        _reap(found)
    return killed


def _reap(pids: Collection[int]) -> None:
    for pid in pids:
        try:
            os.waitpid(pid, 0)
        except ChildProcessError:
            pass
