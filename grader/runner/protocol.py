"""The two wires of the runner.

worker -> CLI: one JSON object per line on the worker's stdout (events; plain data only).
child -> worker: length-prefixed pickle frames on a pipe. The child runs candidate code, so the
worker unpickles with an allow-list: plain containers and numpy arrays, nothing that executes.
"""

from __future__ import annotations

import io
import os
import pickle
import select
import signal
import struct
import time
from dataclasses import dataclass
from typing import Any

_HEADER = struct.Struct("!Q")
"""The worker's one command-line flag: pay one-time costs before saying ready."""
MAX_FRAME = 256 * 1024 * 1024

_ALLOWED = {
    ("numpy", "ndarray"),
    ("numpy", "dtype"),
    ("numpy.core.multiarray", "_reconstruct"),
    ("numpy._core.multiarray", "_reconstruct"),
    ("numpy.core.multiarray", "scalar"),
    ("numpy._core.multiarray", "scalar"),
    ("numpy.core.numeric", "_frombuffer"),
    ("numpy._core.numeric", "_frombuffer"),
    ("builtins", "complex"),
    ("builtins", "set"),
    ("builtins", "frozenset"),
    ("_codecs", "encode"),
}


class _SafeUnpickler(pickle.Unpickler):
    def find_class(self, module: str, name: str) -> Any:
        if (module, name) in _ALLOWED or (module.startswith("numpy") and name.endswith("DType")):
            return super().find_class(module, name)
        raise pickle.UnpicklingError(f"refusing to unpickle {module}.{name} from a child")


def dumps(obj: Any) -> bytes:
    payload = pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)
    return _HEADER.pack(len(payload)) + payload


def loads(payload: bytes) -> Any:
    return _SafeUnpickler(io.BytesIO(payload)).load()


# Sent by the worker to a child it is about to kill at a timeout: the child answers with a
# "last_words" frame holding what the code printed since its last frame, then exits.
LAST_WORDS_SIGNAL = signal.SIGUSR1


def write_frame(fd: int, obj: Any) -> None:
    view = memoryview(dumps(obj))
    while view:
        written = os.write(fd, view)
        view = view[written:]


class FrameTimeout(Exception):
    """No whole frame arrived before the deadline."""


def read_frame(fd: int, deadline: float) -> Any | None:
    """The next frame's object, None at end of file; FrameTimeout past the deadline."""
    header = _read_exact(fd, _HEADER.size, deadline)
    if header is None:
        return None
    (length,) = _HEADER.unpack(header)
    if length > MAX_FRAME:
        raise pickle.UnpicklingError(f"frame of {length} bytes is too large")
    body = _read_exact(fd, length, deadline)
    if body is None:
        return None
    return loads(body)


def _read_exact(fd: int, size: int, deadline: float) -> bytes | None:
    chunks: list[bytes] = []
    remaining = size
    while remaining:
        wait = deadline - time.monotonic()
        if wait <= 0:
            raise FrameTimeout
        ready, _, _ = select.select([fd], [], [], wait)
        if not ready:
            raise FrameTimeout
        chunk = os.read(fd, min(remaining, 1 << 20))
        if not chunk:
            return None
        chunks.append(chunk)
        remaining -= len(chunk)
    return b"".join(chunks)


@dataclass(frozen=True)
class Request:
    """One job for the worker. `root` holds exercises/; weights default to the registry's.

    `kind` is "check" (grade the parts) or "followup" (run each part's follow-up
    demonstration in a child, like a probe, and send back its evidence).
    """

    id: str
    root: str
    flavor: str
    parts: list[str]
    seed: int
    timeout_s: float = 10.0
    memory_mb: int = 2048
    weights: dict[str, float] | None = None
    device: str = "auto"
    kind: str = "check"

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Request:
        return cls(**data)
