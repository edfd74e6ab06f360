"""Small JSON files in a workspace's `.grader/` folder: last results, hints taken.

Written atomically (a temporary file in the same folder, fsync, then rename), so Ctrl-C or a
crash mid-write leaves either the old file or the new one, never half of one.
"""

from __future__ import annotations

import csv
import json
import math
import os
import stat
import tempfile
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any, Literal

from grader.engine.documents import json_document
from grader.engine.results import RunResult
from grader.engine.workspace import Workspace

LAST_RESULTS = "last.json"
HINTS = "hints.json"

CSV_HEADER = ("path", "status", "score", "max_score")
"""The first columns of `grade --csv`, which a spreadsheet keeps however it saves the file."""


def _grade_csv(data: bytes) -> bool:
    """Whether the file starts as a `grade --csv` does, also as a spreadsheet saves it again
    (a byte-order mark, every cell quoted, semicolons where commas are decimal points)."""
    first = data.removeprefix(b"\xef\xbb\xbf").split(b"\n", 1)[0].decode("utf-8", "replace")
    for delimiter in (",", ";", "\t"):
        cells = next(csv.reader([first.rstrip("\r")], delimiter=delimiter), [])
        if tuple(cell.strip() for cell in cells[:len(CSV_HEADER)]) == CSV_HEADER:
            return True
    return False


def _gradescope_results(data: bytes) -> bool:
    """Whether the file is a results.json of Gradescope's shape (its list of tests), not
    another JSON document that happens to hold a score (a saved `grader check --json`)."""
    try:
        document = json.loads(data)
    except ValueError:
        return False
    return isinstance(document, dict) and isinstance(document.get("tests"), list)


def _cohort_report(data: bytes) -> bool:
    return b'<meta name="generator" content="grader' in data[:4096]


OutputKind = Literal["csv", "gradescope", "report"]
OUTPUTS: dict[OutputKind, tuple[str, Callable[[bytes], bool]]] = {
    "csv": ("a CSV that `grade --csv` wrote", _grade_csv),
    "gradescope": ("a Gradescope results.json", _gradescope_results),
    "report": ("a cohort report", _cohort_report),
}
"""What each output a command writes where it is told looks like, and how it is told from
anything else: a file in its place is replaced only where it is an earlier output of the same
kind (or empty), so that a slip of the option (`--csv part1_inplace.py`) costs no one's file."""
OUTPUT_READ_BYTES = 64 << 20


def replaces_only_its_own(path: Path, kind: OutputKind) -> str | None:
    """Why the output `kind` may not be written at `path` (None where it may): a regular file
    there that is neither empty nor an earlier output of that kind. Anything else (nothing
    there, a device such as /dev/null) is left to the write itself."""
    what, ours = OUTPUTS[kind]
    data = regular_file_bytes(path, OUTPUT_READ_BYTES + 1)
    if not data or len(data) <= OUTPUT_READ_BYTES and ours(data):
        return None
    return f"{path} exists and is not {what}: move it away or name another file"


def write_bytes_atomic(path: Path, data: bytes) -> None:
    """Replace `path` with `data` so that a reader, or a crash, sees the old file or the new;
    with the old file's permissions, or a new file's usual ones (not the temporary file's
    0600: a restored exercise file keeps the mode its owner gave it)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        mode = stat.S_IMODE(path.stat().st_mode)
    except OSError:
        umask = os.umask(0)
        os.umask(umask)
        mode = 0o666 & ~umask
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        os.fchmod(fd, mode)
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        try:
            os.replace(tmp, path)
        except OSError as exc:  # named by the path being written, not the temporary file
            raise OSError(exc.errno, exc.strerror, str(path)) from exc
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def regular_file_bytes(path: Path, most: int | None = None) -> bytes | None:
    """The bytes of a regular file (its first `most`), or None for anything else and where it
    cannot be read. A FIFO, a device or a socket left at a file's name by a candidate's code
    would block its reader for good (or feed it forever); it is opened without blocking and
    never read."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return None
    with open(fd, "rb") as handle:
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                return None
            return handle.read() if most is None else handle.read(most)
        except OSError:
            return None


def write_text_atomic(path: Path, text: str) -> None:
    write_bytes_atomic(path, text.encode())


def write_json_atomic(path: Path, data: Any) -> None:
    write_text_atomic(path, json.dumps(data, indent=2))


def read_json(path: Path, default: Any) -> Any:
    """The file's data, or `default` when it is missing or unreadable (state is a convenience;
    a damaged file must never stop a candidate from checking their work). Read as a regular
    file only: code under test can leave a FIFO at its name, which a plain read waits on for
    good."""
    data = regular_file_bytes(path)
    if data is None:
        return default
    try:
        return json_document(data.decode())
    except ValueError:
        return default


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def _last_entry(value: Any) -> bool:
    """One part's record in last.json as record_results writes it."""
    return (isinstance(value, dict) and _is_number(value.get("score"))
            and _is_number(value.get("max_score")) and isinstance(value.get("full"), bool)
            and isinstance(value.get("when"), str))


def _records(path: Path, valid: Callable[[Any], bool]) -> dict[str, Any]:
    """A state file's records by part id, the ones of the shape this version writes: a file
    that is not a mapping reads as empty, and a record of another shape (a damaged file, an
    older grader's, a hand edit) as absent, so neither stops a command."""
    data = read_json(path, {})
    if not isinstance(data, dict):
        return {}
    return {key: value for key, value in data.items() if isinstance(key, str) and valid(value)}


def record_results(workspace: Workspace, result: RunResult, now: datetime | None = None) -> None:
    """Remember each part's latest score for `grader list`."""
    path = workspace.state_dir / LAST_RESULTS
    last = _records(path, _last_entry)
    when = (now or datetime.now()).strftime("%Y-%m-%d %H:%M")
    for part in result.parts:
        last[part.id] = {"score": part.score, "max_score": part.max_score,
                         "full": part.passed, "when": when}
    write_json_atomic(path, last)


def last_results(workspace: Workspace) -> dict[str, Any]:
    return _records(workspace.state_dir / LAST_RESULTS, _last_entry)


def take_hint(workspace: Workspace, part_id: str, available: int) -> int:
    """Count one more hint for the part; the level to show (capped at what exists)."""
    path = workspace.state_dir / HINTS
    taken = _records(path, lambda v: isinstance(v, int) and not isinstance(v, bool) and v >= 0)
    level = min(int(taken.get(part_id, 0)) + 1, available)
    taken[part_id] = level
    write_json_atomic(path, taken)
    return level
