"""The wires of the runner.

worker -> CLI: one JSON object per line on the worker's stdout (events; plain data only).
worker -> child: the spec it starts with, then each call's arguments on a socket of their own,
one call at a time (ChildJob).
child -> worker: length-prefixed pickle frames on a pipe. The child runs candidate code, so the
worker unpickles with an allow-list: plain containers and numpy arrays, nothing that executes,
and reads what it unpickled into a typed record (`received_frame`) before anything uses it:
a known kind, every field there with its type, and every string valid, bounded text
(grader/engine/safe_text.py), whatever the child wrote.
"""

from __future__ import annotations

import functools
import io
import math
import os
import pickle
import pickletools
import select
import signal
import socket
import struct
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal, TypedDict, cast, get_args, get_type_hints

from grader.engine.limits import DEFAULT_MEMORY_MB, DEFAULT_TIMEOUT_S
from grader.engine.safe_text import (
    DATA_TEXT_LIMIT,
    MESSAGE_LIMIT,
    OUTPUT_LIMIT,
    WHERE_LIMIT,
    received,
)
from grader.engine.shapes import brief, shape_problem

_HEADER = struct.Struct("!Q")
MAX_FRAME = 128 * 1024 * 1024
"""The largest frame a child may send: a frame carries observations and what the code printed
(capped text, a long raise's message: 110 MB from a hostile submission whose row must still
read), and the judge holds each about twice while it reads it."""

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
}


def _latin1(text: Any, encoding: str = "latin1") -> bytes:
    """`_codecs.encode` as pickle uses it (bytes written as latin-1 text, protocols 0 to 2) and
    in no other way: any other codec could make a short frame expand without bound in the
    judge (hex doubles it, and nests), burn its CPU (bz2, zlib) or import an encodings module."""
    if not isinstance(text, str) or encoding not in ("latin1", "latin-1"):
        raise pickle.UnpicklingError("refusing to unpickle a codec other than latin-1")
    return text.encode("latin1")


_STAND_INS = {("_codecs", "encode"): _latin1}
"""Allowed names the receiver answers with a narrower function of its own."""


class _SafeUnpickler(pickle.Unpickler):
    """Resolves only the allowed names, and only from modules this process has already
    imported: a name in a frame can never make the receiver import (and so run) a module."""

    def find_class(self, module: str, name: str) -> Any:
        if (module, name) in _STAND_INS:
            return _STAND_INS[module, name]
        loaded = sys.modules.get(module)
        found = getattr(loaded, name, None) if loaded is not None else None
        if found is not None and ((module, name) in _ALLOWED or _numpy_dtype_class(module, found)):
            return found
        refused = received(f"{module}.{name}", 200, inline=True)  # the child's to choose
        raise pickle.UnpicklingError(f"refusing to unpickle {refused} from a child")


def _numpy_dtype_class(module: str, found: Any) -> bool:
    """numpy's own dtype classes (numpy.dtypes.Float64DType and kin), which a dtype may pickle
    by name."""
    import numpy as np

    return module == "numpy.dtypes" and isinstance(found, type) and issubclass(found, np.dtype)


# What a child's frames are written with, bound when this module is imported: before any
# candidate code runs in the process, and where code under test that rebinds pickle.dumps,
# io.BytesIO or os.write (no module of the grader's reached) cannot put itself between the
# probes and the judge.
_Pickler = pickle.Pickler
_BytesIO = io.BytesIO
_write = os.write
_memoryview = memoryview


def dumps(obj: Any) -> bytes:
    """A frame: the header, then `obj` pickled by the bound pickler with a table of reducers
    of its own (empty), so that none registered with copyreg by the code under test applies."""
    buffer = _BytesIO()
    pickler = _Pickler(buffer, protocol=pickle.HIGHEST_PROTOCOL)
    pickler.dispatch_table = {}
    pickler.dump(obj)
    payload = buffer.getvalue()
    return _HEADER.pack(len(payload)) + payload


def loads(payload: bytes) -> Any:
    """A frame's object; refused (pickle.UnpicklingError) where building it would cost more
    than its size says (see bounded_hashing)."""
    bounded_hashing(payload)
    return _SafeUnpickler(io.BytesIO(payload)).load()


FRAME_OPCODES = 2_000_000
"""The most pieces a frame may be built of: a frame carries numbers, names and arrays (an
array is one piece), and reading each piece's effect costs the judge a step in Python."""
CHOSEN_HASHES = 64
"""The most members one dict or set of a frame may have whose hash the sender chooses: an
int's hash is its value, a float's and a tuple's follow from theirs (a string's is salted
per process), so a set of ints that all collide costs its receiver time quadratic in their
number; 64 cost nothing, and a frame's dicts are keyed by names."""
NESTING = 200
"""The deepest a frame's objects may nest (a tuple in a tuple in a dict ...): hashing a key,
comparing or freeing a nested object recurses in C, and a million levels overflow the judge's
stack. A frame's data nests a few levels deep (a tree of results, an array's state)."""
_STRINGS = frozenset({"SHORT_BINUNICODE", "BINUNICODE", "BINUNICODE8", "UNICODE"})
_CONTAINERS = frozenset({"EMPTY_DICT", "DICT", "EMPTY_SET", "FROZENSET"})
_MEMO_PUT = frozenset({"PUT", "BINPUT", "LONG_BINPUT"})
_MEMO_GET = frozenset({"GET", "BINGET", "LONG_BINGET"})
_ADDED_TO = frozenset({"APPEND", "APPENDS", "SETITEM", "SETITEMS", "ADDITEMS", "BUILD"})
"""Opcodes that add to (or set the state of) an object already on the stack and leave it
there: the object keeps its identity, and its depth grows with what it takes in."""


Slot = tuple[str, int]
"""What bounded_hashing knows of one stack slot: its kind ("str", "mark", "container" for a
dict or set, "other") and an id that the memo and later additions share (0: none)."""

_OTHER: Slot = ("other", 0)


@functools.cache
def _shape(name: str) -> tuple[int, int | None, int, str, bool]:
    """What bounded_hashing needs of an opcode, by name: how many slots it takes (the mark
    and what lies above it counted as one), how many of them lie below its mark (None: it
    takes no mark), how many it makes, the kind of what it makes, and whether it adds to an
    object it leaves on the stack (_ADDED_TO)."""
    op = next(op for op in pickletools.opcodes if op.name == name)
    before = op.stack_before
    below = before.index(pickletools.markobject) if pickletools.markobject in before else None
    kind = "str" if name in _STRINGS else "mark" if name == "MARK" else \
        "container" if name in _CONTAINERS else "other"
    return len(before), below, len(op.stack_after), kind, name in _ADDED_TO


def bounded_hashing(payload: bytes) -> None:
    """Walk a frame's opcodes without building anything (pickletools.genops) and refuse one
    with too many pieces, objects nested more than NESTING deep, or a dict or set holding more
    than CHOSEN_HASHES members of a kind whose hash the sender chooses: the unpickler builds
    those in C, where no signal or watchdog can stop it, and a child could otherwise spend the
    judge's CPU or overflow its stack. Each object made is a Slot with an id, so that members
    added to it piece by piece, or through the memo, count together, and its depth is one more
    than the deepest of what it was built from or took in. An object placed in another is
    sealed: pickle sends each object whole before the one that holds it, and one changed
    afterwards (fetched from the memo) could deepen what holds it unseen. The walk is the
    judge's cost of every frame a child sends (a repair's thousand variants answer in frames
    of tens of thousands of opcodes), so each opcode costs it a few tuple operations."""
    stack: list[Slot] = []
    memo: dict[int, Slot] = {}
    chosen: dict[int, int] = {}
    depth: dict[int, int] = {}
    sealed: set[int] = set()
    try:
        for count, (op, arg, _) in enumerate(pickletools.genops(payload)):
            if count >= FRAME_OPCODES:
                raise pickle.UnpicklingError(f"a frame of more than {FRAME_OPCODES} pieces")
            name = op.name
            if name in _MEMO_PUT or name == "MEMOIZE":
                memo[len(memo) if name == "MEMOIZE" else int(cast(int, arg))] = stack[-1]
                continue
            if name in _MEMO_GET:
                stack.append(memo.get(int(cast(int, arg)), _OTHER))
                continue
            taking, marked, making, kind, adds = _shape(name)
            if marked is None:
                if len(stack) < taking:
                    raise IndexError("an opcode takes more than the stack holds")
                popped = stack[len(stack) - taking:]
                del stack[len(stack) - taking:]
                below: list[Slot] = []
            else:
                mark = len(stack) - 1
                while stack[mark][0] != "mark":
                    mark -= 1
                    if mark < 0:
                        raise IndexError("no mark on the stack")
                if mark < marked:
                    raise IndexError("an opcode takes more than the stack holds")
                popped = stack[mark + 1:]
                below = stack[mark - marked:mark]
                del stack[mark - marked:]
            if adds:
                target, taken = (below[0], popped) if below else (popped[0], popped[1:])
                if target[1] in sealed:
                    raise pickle.UnpicklingError("an object changed after it was placed in "
                                                 "another")
                if name in ("SETITEM", "SETITEMS", "ADDITEMS"):
                    _count(chosen, target, taken[0::2] if name != "ADDITEMS" else taken)
                _deepen(depth, target, taken)
                sealed.update(part[1] for part in taken)
                stack.append(target)
                continue
            parts = popped + below if below else popped
            if not making:  # POP, STOP, FRAME...: nothing made, nothing placed
                continue
            slot = (kind, count + 1)
            if kind == "container":
                _count(chosen, slot, popped[0::2] if name == "DICT" else popped)
            if parts:
                _deepen(depth, slot, parts)
                for part in parts:  # what it took is now inside what it made
                    sealed.add(part[1])
            stack.extend([slot] * making)
    except (ValueError, IndexError) as exc:  # a malformed stream: the unpickler says how
        raise pickle.UnpicklingError(f"malformed frame: {exc}") from None


def _deepen(depth: dict[int, int], made: Slot, parts: list[Slot]) -> None:
    """The depth of `made` once it holds `parts` (one more than the deepest of them)."""
    if not parts or not made[1]:
        return
    deepest = 1 + max(depth.get(part[1], 0) for part in parts)
    if deepest > depth.get(made[1], 0):
        if deepest > NESTING:
            raise pickle.UnpicklingError(f"objects nested more than {NESTING} deep")
        depth[made[1]] = deepest


def _count(chosen: dict[int, int], container: Slot, members: list[Slot]) -> None:
    if container[0] != "container":
        return
    chosen[container[1]] = chosen.get(container[1], 0) + sum(m[0] != "str" for m in members)
    if chosen[container[1]] > CHOSEN_HASHES:
        raise pickle.UnpicklingError(f"a dict or set of more than {CHOSEN_HASHES} members "
                                     "that are not strings")


# Sent by the worker to a child it is about to kill at a timeout: the child answers with a
# "last_words" frame holding what the code printed since its last frame, then exits.
LAST_WORDS_SIGNAL = signal.SIGUSR1


def write_frame(fd: int, obj: Any) -> None:
    view = _memoryview(dumps(obj))
    while view:
        written = _write(fd, view)
        view = view[written:]


TimeoutWhy = Literal["cpu", "idle", "wall", "clock", "files", "hidden"]


class FrameTimeout(Exception):
    """No whole frame arrived in time. `why`: the child used up its CPU time ("cpu"), sat
    asleep for as long ("idle"), or neither, yet the clock's backstop ran out ("wall": a child
    starved by a busy machine); "clock": the limit was counted on the clock alone (the child's
    usage could not be read), which tells a starved child from a hung one no more than a
    plain timeout does; "files": while the machine's table of open files was crowded, the
    child's tree held more of them than one tree may, or ("hidden") kept them out of sight."""

    def __init__(self, why: TimeoutWhy = "clock") -> None:
        super().__init__(why)
        self.why: TimeoutWhy = why


Wait = Callable[[int], None]
"""Returns once the fd has something to read; FrameTimeout when the reader gives up."""


def until(deadline: float) -> Wait:
    """A Wait that gives up at `deadline` on the clock (a reader with no child to watch)."""
    def wait(fd: int) -> None:
        left = deadline - time.monotonic()
        if left <= 0 or not select.select([fd], [], [], left)[0]:
            raise FrameTimeout

    return wait


def read_frame(fd: int, wait: Wait) -> Any | None:
    """The next frame, as a typed record (received_frame), None at end of file; `wait`'s
    FrameTimeout whenever nothing is there to read (a frame larger than a pipe arrives in
    pieces, each waited for); pickle.UnpicklingError for anything that is no frame."""
    header = _read_exact(fd, _HEADER.size, wait)
    if header is None:
        return None
    (length,) = _HEADER.unpack(header)
    if length > MAX_FRAME:
        raise pickle.UnpicklingError(f"frame of {length} bytes is too large")
    body = _read_exact(fd, length, wait)
    if body is None:
        return None
    try:
        sent = loads(body)
    except (Exception, SystemExit) as exc:  # noqa: BLE001 - the child's bytes end nothing here
        raise pickle.UnpicklingError(received(f"{type(exc).__name__}: {exc}",
                                              MESSAGE_LIMIT)) from None
    return received_frame(sent, len(body))


def _read_exact(fd: int, size: int, wait: Wait) -> bytes | None:
    chunks: list[bytes] = []
    remaining = size
    while remaining:
        wait(fd)
        chunk = os.read(fd, min(remaining, 1 << 20))
        if not chunk:
            return None
        chunks.append(chunk)
        remaining -= len(chunk)
    return b"".join(chunks)


RequestKind = Literal["check", "followup"]


@dataclass(frozen=True)
class Request:
    """One job for the worker. `root` holds exercises/; weights default to the round's.

    `kind` is "check" (grade the parts) or "followup" (run each part's follow-up
    demonstration in a child, like a probe, and send back its evidence). `informational`
    False: a check that cannot apply on this machine (GPU timing without CUDA) is reported
    as such without running, instead of running for its figures.

    `measured` False: a check measured in timed rounds (checks.base.Measured: CPU growth, GPU
    timing) is reported skipped without running, for a caller that wants the other verdicts
    fast and none of those (a test of a mistake no timing can show).

    `graded`: a coach's grading (`grade`, Gradescope), where a check observed inside the
    candidate's process (Check.observed) advises and is worth no points.

    `seed` is the seed the run was given, the only one any message shows; `hidden_seed`, under
    an instructor's secret, the one its inputs are drawn from instead (grader/engine/secret.py),
    which nothing shows.
    """

    id: str
    root: str
    round: str
    flavor: str
    parts: list[str]
    seed: int
    timeout_s: float = DEFAULT_TIMEOUT_S
    memory_mb: int = DEFAULT_MEMORY_MB
    weights: dict[str, float] | None = None
    device: str = "auto"
    kind: RequestKind = "check"
    informational: bool = True
    hidden_seed: int | None = None
    graded: bool = False
    measured: bool = True

    @classmethod
    def from_dict(cls, data: Any) -> Request:
        """The request as the worker receives it, checked against its fields first (ValueError
        names the first that does not fit)."""
        problem = shape_problem(data, cls, whole="it")
        if problem:
            raise ValueError(f"malformed request: {problem}")
        return cls(**data)


# --- worker -> child: what a child is asked to run -----------------------------------------------


class ProbeCall(TypedDict):
    """One probe as a child starts with it: a name, whether it may use CUDA, whether its
    child must be unable to start processes (Plan.processless) and threads (Plan.threadless),
    and whether it profiles a call (Plan.forkless: the profiler's thread is then made before
    the filter that refuses others). This, and each call's arguments
    when the judge releases that call (ChildJob), is all that crosses into a child, so in the
    sandbox nothing of the judge's (its truths, its closures) is ever within the candidate's
    reach."""

    probe: str
    uses_device: bool
    forkless: bool
    threadless: bool
    profiled: bool


class ChildSpec(TypedDict):
    """What a child knows from its start: import `module` of the workspace at `root` (none for
    a baseline), then run `calls`, the first of which is plan number `first` of its part, each
    once its arguments arrive (ChildJob)."""

    round: str
    root: str
    module: str | None
    flavor: str
    calls: list[ProbeCall]
    first: int
    memory_mb: int
    device_ready: bool


@dataclass(frozen=True)
class ChildJob:
    """A child's job as the judge holds it: the spec the child starts with, and each call's
    plain-data keyword arguments (its inputs, its nonce), which the child receives on a socket
    of its own one call at a time, when the judge releases that call (Child.release): after the
    candidate's file is imported and, for a timed run, after the judge has read what the import
    cost; after the previous call has answered. Nothing the candidate's code runs before a call
    (at import, in an earlier call, in a thread) can see that call's inputs, so no work on them
    can happen where it is not measured, watched or charged."""

    spec: ChildSpec
    args: tuple[dict[str, Any], ...]


def send_orders(sock: socket.socket, args: dict[str, Any]) -> None:
    """Hand a child one call's arguments: written whole into a memory file made now, whose
    descriptor alone crosses the child's orders socket (a byte and a descriptor: the send never
    waits, however large the inputs and whatever the child is doing, even writing frames that
    nobody reads while it is sent). A child that is gone gets nothing, and its silence reports
    it."""
    held = os.memfd_create("call-arguments", os.MFD_CLOEXEC)
    try:
        view = memoryview(dumps(args))
        while view:
            view = view[os.write(held, view):]
        socket.send_fds(sock, [b"!"], [held])
    except OSError:  # the child is gone, or its socket full of what it never read
        pass
    finally:
        os.close(held)


def receive_orders(sock: socket.socket) -> dict[str, Any]:
    """In the child: the next call's arguments, waited for. Only the judge holds the other end
    of the socket, so they are unpickled as they are."""
    _, fds, _, _ = socket.recv_fds(sock, 1, 1)
    if not fds:
        raise EOFError("the judge sent no arguments for this call")
    with os.fdopen(fds[0], "rb") as held:
        held.seek(0)
        (length,) = _HEADER.unpack(held.read(_HEADER.size))
        args: dict[str, Any] = pickle.loads(held.read(length))
    return args


# --- child -> worker frames ---------------------------------------------------------------------


class SetUpFrame(TypedDict):
    """A child's first frame: its own setup is done, and whatever follows may be the code's."""

    kind: Literal["set_up"]


class SetupFailedFrame(TypedDict):
    """A child's first frame when its own setup failed (no code of the candidate's has run)."""

    kind: Literal["setup_failed"]
    message: str


class ImportedFrame(TypedDict):
    kind: Literal["imported"]
    output: str


class ImportErrorFrame(TypedDict):
    kind: Literal["import_error"]
    message: str
    output: str


class ProbeFrame(TypedDict):
    """One probe's outcome. kind "observation" carries `data`; "not_implemented" (the stub
    raised NotImplementedError), "fault" (the result could not be read) and "error" (the code
    crashed) carry `message`."""

    kind: Literal["observation", "not_implemented", "fault", "error"]
    index: int
    duration_s: float
    output: str
    data: Any
    message: str


class LastWordsFrame(TypedDict):
    kind: Literal["last_words"]
    output: str
    where: str


Frame = (SetUpFrame | SetupFailedFrame | ImportedFrame | ImportErrorFrame | ProbeFrame
         | LastWordsFrame)
FRAME_KINDS = frozenset({"set_up", "setup_failed", "imported", "import_error", "import_refused",
                         "observation", "not_implemented", "fault", "error", "last_words"})


def received_frame(obj: Any, size: int) -> dict[str, Any]:
    """What a child sent, as the judge takes it: a frame of a known kind with every field of
    every kind (kind, index, duration_s, output, message, where, data), each of its type. The
    strings are made valid and cut to the judge's caps (grader/engine/safe_text.py), never the
    child's, whose capture of what the code prints the code can lift: what it printed to
    OUTPUT_LIMIT, the message to MESSAGE_LIMIT, the line it hung on to WHERE_LIMIT, every
    string inside `data` to DATA_TEXT_LIMIT. A duration that is no finite, non-negative number
    reads as 0. The arrays in `data` may hold no more bytes than the `size` of the frame that
    brought them (received_data). pickle.UnpicklingError for an object that is no frame."""
    if not isinstance(obj, dict) or obj.get("kind") not in FRAME_KINDS:
        raise pickle.UnpicklingError("a message that is not one of the protocol's frames")
    index = obj.get("index", -1)
    return {"kind": obj["kind"],
            "index": index if type(index) is int else -1,
            "duration_s": _seconds(obj.get("duration_s")),
            "output": _text(obj.get("output"), OUTPUT_LIMIT),
            "message": _text(obj.get("message"), MESSAGE_LIMIT),
            "where": _text(obj.get("where"), WHERE_LIMIT),
            "data": received_data(obj.get("data"), size)}


def _text(value: Any, limit: int) -> str:
    return received(value, limit) if isinstance(value, str) else ""


def _seconds(value: Any) -> float:
    if not isinstance(value, int | float) or isinstance(value, bool):
        return 0.0
    try:
        seconds = float(value)
    except OverflowError:
        return 0.0
    return seconds if math.isfinite(seconds) and seconds >= 0 else 0.0


DATA_NODES = 1_000_000
"""How many values an observation's data may hold, counted as a walk over it meets them (a
list shared a thousand times counts a thousand times): pickle can send a graph whose walk is
exponential in its size, and every walk the judge makes of the data is bounded by this one."""


ARRAY_SLACK = 1 << 16
"""Bytes of arrays a frame may hold beyond its own length (see received_data)."""


def received_data(value: Any, size: int) -> Any:
    """An observation's data with every string in it, keys included, made valid and cut to
    DATA_TEXT_LIMIT; containers come back as the same type (the same object where nothing in
    them changed), numbers and arrays as they came. pickle.UnpicklingError past DATA_NODES
    values, or where its distinct arrays hold more bytes than a frame of `size` bytes carried
    (plus ARRAY_SLACK): an array's bytes travel in the frame, and one made from a shape alone
    (numpy's _reconstruct, never filled) is a few bytes that the judge would allocate, and
    touch, by the gigabyte. Nesting deeper than Python recurses is a RecursionError, as it
    would be for the judge."""
    import numpy as np

    budget = [DATA_NODES]
    room = [size + ARRAY_SLACK]
    arrays: set[int] = set()

    def walk(value: Any) -> Any:
        budget[0] -= 1
        if budget[0] < 0:
            raise pickle.UnpicklingError(f"data of more than {DATA_NODES} values")
        kind = type(value)
        if kind is str:
            return received(value, DATA_TEXT_LIMIT)
        if kind is dict:
            items = [(walk(k), walk(v)) for k, v in value.items()]
            if all(a is k and b is v for (a, b), (k, v) in zip(items, value.items(),
                                                                strict=True)):
                return value
            return dict(items)
        if kind in (list, tuple, set, frozenset):
            members = [walk(v) for v in value]
            if all(a is b for a, b in zip(members, value, strict=True)):
                return value
            return kind(members)
        if isinstance(value, np.ndarray) and id(value) not in arrays:
            arrays.add(id(value))
            room[0] -= value.nbytes
            if room[0] < 0:
                raise pickle.UnpicklingError(f"arrays of more bytes than the {size}-byte frame "
                                             "that brought them")
        return value

    return walk(value)


def probe_frame(kind: str, index: int = -1, message: str = "", data: Any = None,
                duration_s: float = 0.0, output: str = "") -> ProbeFrame:
    return {"kind": kind, "index": index, "duration_s": duration_s,  # type: ignore[typeddict-item]
            "output": output, "data": data, "message": message}


# --- worker -> CLI events -------------------------------------------------------------------------


class ReadyEvent(TypedDict):
    type: Literal["ready"]
    cuda: bool


class PartEvent(TypedDict):
    type: Literal["part_start", "part_end"]
    request: str
    part: str


class CheckEvent(TypedDict):
    type: Literal["check"]
    request: str
    part: str
    result: dict[str, Any]


class FollowupEvent(TypedDict):
    type: Literal["followup"]
    request: str
    part: str
    evidence: dict[str, Any]


class AliveEvent(TypedDict):
    """A child's frame arrived: the request is making progress (the CLI's watchdog)."""

    type: Literal["alive"]
    request: str


class DoneEvent(TypedDict):
    """The request is answered. `retire`: the worker ends after it, its limits changed by the
    code it ran in a way it cannot set back (strays.limits_set_back): the next request gets a
    fresh worker, not one that the last submission's code left altered."""

    type: Literal["done"]
    request: str
    retire: bool


class FatalEvent(TypedDict):
    type: Literal["fatal"]
    request: str
    message: str
    trace: str


Event = (ReadyEvent | PartEvent | CheckEvent | FollowupEvent | AliveEvent | DoneEvent
         | FatalEvent)
EVENTS: dict[str, Any] = {kind: typed for typed in get_args(Event)
                          for kind in get_args(get_type_hints(typed)["type"])}
"""Each event type's record, by its `type`."""


def received_event(data: Any) -> Event:
    """A worker's event as the CLI receives it: a known type, every field there with its type
    (ValueError names the first that does not fit)."""
    kind = data.get("type") if isinstance(data, dict) else None
    typed = EVENTS.get(kind) if isinstance(kind, str) else None
    if typed is None:
        raise ValueError(f"an event of no known type: {brief(data)}")
    problem = shape_problem(data, typed, whole="it")
    if problem:
        raise ValueError(f"the {kind} event: {problem}")
    return cast(Event, data)
