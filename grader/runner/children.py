"""A child as the worker sees it: a process running one ChildSpec, whose frames arrive on a pipe.

Two kinds: ForkedChild, forked from the worker itself (practice mode, and every baseline, which
runs no candidate code), and the sandbox's children (grader.runner.sandbox), forked inside
bubblewrap on the worker's word. The worker treats both alike.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass
from types import ModuleType
from typing import Any, Protocol

from grader.rounds import Round, load_module
from grader.runner import strays
from grader.runner.child import run_child
from grader.runner.protocol import (
    LAST_WORDS_SIGNAL,
    ChildSpec,
    FrameTimeout,
    Request,
    probe_frame,
    read_frame,
)

LAST_WORDS_GRACE_S = 0.5  # how long a hung child may take to send what it printed


@dataclass(frozen=True)
class Ended:
    """How a child ended, in words, and the CPU seconds the kernel charged it (user + system,
    its waited-for children included), read by its parent: a figure the child cannot forge."""

    how: str
    cpu_s: float


class ChildrenLost(Exception):
    """No child can be started for the rest of this request (its sandbox was lost: the code
    under test stopped or killed it); the message says so, for every check not run."""


class Child(Protocol):
    """A process running one ChildSpec, forked here or in a sandbox; the worker reads its
    frames from `fd`."""

    fd: int

    def last_words(self) -> tuple[str, str]: ...

    def end(self, kill: bool) -> Ended: ...


Spawn = Callable[[ChildSpec], Child]
Children = Callable[[Request, Round], AbstractContextManager[Spawn]]
"""Gives a request its way of running candidate code: forked here, or one sandbox for it."""


def next_frame(child: Child, timeout_s: float) -> dict[str, Any] | None:
    """The child's next frame; a malformed one reads as an error frame, not a worker crash."""
    try:
        frame = read_frame(child.fd, time.monotonic() + timeout_s)
    except FrameTimeout:
        raise
    except Exception as exc:  # noqa: BLE001 - whatever the child wrote, the worker goes on
        return dict(probe_frame("error", message=f"unreadable result from the child "
                                f"process: {exc}"))
    if frame is not None and not isinstance(frame, dict):
        return dict(probe_frame("error", message="unreadable result from the child process"))
    return frame


class ForkedChild:
    """A child forked from this worker (practice mode, and every baseline): its pipe, and the
    kill of everything it started once it ends."""

    def __init__(self, spec: ChildSpec, helpers: ModuleType) -> None:
        read_fd, write_fd = os.pipe()
        worker_pid = os.getpid()
        pid = os.fork()
        if pid == 0:
            os.close(read_fd)
            run_child(write_fd, spec, helpers, worker_pid)
        os.close(write_fd)
        self.pid, self.fd = pid, read_fd

    def last_words(self) -> tuple[str, str]:
        """(what a hung child printed since its last frame, the candidate's line it was on),
        asked for before it is killed; empty when it cannot answer within the grace (stuck in
        C code, or its handler replaced)."""
        return ask_last_words(lambda: os.kill(self.pid, LAST_WORDS_SIGNAL), self.fd)

    def end(self, kill: bool) -> Ended:
        """Reap the child (killed first if asked), then every process it left behind."""
        os.close(self.fd)
        return Ended(*strays.reap(self.pid, kill))


def ask_last_words(ask: Callable[[], None], fd: int) -> tuple[str, str]:
    """(what a hung child printed since its last frame, the candidate's line it was on), once
    `ask` has signalled it; empty when it cannot answer within the grace (stuck in C code, or
    its handler replaced)."""
    try:
        ask()
        frame = read_frame(fd, time.monotonic() + LAST_WORDS_GRACE_S)
    except Exception:  # noqa: BLE001 - gone, silent or garbled: nothing to add
        return "", ""
    if isinstance(frame, dict) and frame.get("kind") == "last_words":
        return str(frame.get("output", "")), str(frame.get("where", ""))
    return "", ""


def fork_spawner(round_: Round) -> Spawn:
    """Children forked from this worker, with the round's probe helpers already imported."""
    helpers = load_module(round_, "probes")
    return lambda spec: ForkedChild(spec, helpers)
