"""The judge's line to a sandbox: length-prefixed messages on a Unix socket, a pipe's write end
passed along with a message where one is needed.

Both directions unpickle with the runner's allow-list (plain containers and numpy arrays): what
comes out of a sandbox may have been written by the code under test.
"""

from __future__ import annotations

import array
import os
import select
import socket
import time
from typing import Any

from grader.runner.protocol import MAX_FRAME, dumps, loads

_HEADER_SIZE = 8


class ChannelClosed(Exception):
    """The other end is gone, or sent something that is no message."""


def send(sock: socket.socket, message: dict[str, Any], fds: tuple[int, ...] = ()) -> None:
    """Send one message; `fds` travel with its first bytes."""
    data = dumps(message)
    try:
        if fds:
            sent = sock.sendmsg([data[:_HEADER_SIZE]],
                               [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", fds))])
            data = data[sent:]
        sock.sendall(data)
    except OSError as exc:
        raise ChannelClosed(str(exc)) from exc


def receive(sock: socket.socket, timeout_s: float | None = None) -> tuple[dict[str, Any],
                                                                          list[int]]:
    """The next message and the fds that came with it. ChannelClosed at end of stream or on
    garbage; TimeoutError when nothing whole arrived within timeout_s."""
    deadline = None if timeout_s is None else time.monotonic() + timeout_s
    _wait(sock, deadline)
    try:
        head, fds, _, _ = socket.recv_fds(sock, _HEADER_SIZE, 4)
    except OSError as exc:
        raise ChannelClosed(str(exc)) from exc
    if not head:
        raise ChannelClosed("end of stream")
    head += _read_exact(sock, _HEADER_SIZE - len(head), deadline)
    length = int.from_bytes(head, "big")
    if length > MAX_FRAME:
        _close_all(fds)
        raise ChannelClosed(f"a message of {length} bytes is too large")
    try:
        message = loads(_read_exact(sock, length, deadline))
    except (Exception, SystemExit) as exc:  # what the sender wrote ends nothing here
        _close_all(fds)
        raise ChannelClosed(f"unreadable message: {exc}") from exc
    if not isinstance(message, dict):
        _close_all(fds)
        raise ChannelClosed("a message that is not a mapping")
    return message, fds


def _wait(sock: socket.socket, deadline: float | None) -> None:
    wait = None if deadline is None else max(0.0, deadline - time.monotonic())
    ready, _, _ = select.select([sock], [], [], wait)
    if not ready:
        raise TimeoutError


def _read_exact(sock: socket.socket, size: int, deadline: float | None) -> bytes:
    chunks: list[bytes] = []
    while size > 0:
        _wait(sock, deadline)
        try:
            chunk = sock.recv(min(size, 1 << 20))
        except OSError as exc:
            raise ChannelClosed(str(exc)) from exc
        if not chunk:
            raise ChannelClosed("end of stream inside a message")
        chunks.append(chunk)
        size -= len(chunk)
    return b"".join(chunks)


def _close_all(fds: list[int]) -> None:
    for fd in fds:
        os.close(fd)
