"""`grader watch`: re-run the checks each time an exercise file is saved.

The loop is a plain function over an iterable of change batches, so tests drive it with a
scripted list or with the real watcher and a stop condition; what a run shows on the terminal
is the watch screen's (grader.render.watch_screen). In use the batches come from
watchfiles, debounced (an editor's save is often several writes), with an empty batch every
second while nothing changes, which is when the round's clock is redrawn. One warm worker
serves every run: torch is imported once, and each run forks fresh children that re-import the
candidate's files.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from grader.engine.state import regular_file_bytes

if TYPE_CHECKING:
    import threading

Batch = set[tuple[Any, str]]
DEBOUNCE_MS = 400
TICK_MS = 1000


def exercise_files(paths: Iterable[str]) -> list[str]:
    """The changed paths worth a re-check: Python files, not caches or editor droppings."""
    keep = []
    for path in paths:
        p = Path(path)
        if p.suffix == ".py" and "__pycache__" not in p.parts and not p.name.startswith("."):
            keep.append(path)
    return sorted(set(keep))


def watch_loop(batches: Iterable[Batch], on_change: Callable[[list[str]], None],
               on_idle: Callable[[], None] | None = None, max_runs: int | None = None,
               folder: Path | None = None) -> int:
    """Call on_change for each batch with exercise files in it, on_idle for the rest; stop
    when the batches end or after max_runs changes. Returns the number of runs.

    The first batch heard after a check holds what changed while it ran: a file there that
    holds what it held as the check ended was changed by the check itself (the code under
    test: a part that writes to its own file would otherwise have every check start the
    next, for good), and starts no check; a save heard later starts one, changed or not.
    `folder`: the exercises, read as each check ends."""
    runs = 0
    ended = _contents(folder)
    for batch in batches:
        changed = [path for path in exercise_files(path for _, path in batch)
                   if path not in ended or regular_file_bytes(Path(path)) != ended[path]]
        ended = {}
        if not changed:
            if on_idle is not None:
                on_idle()
            continue
        on_change(changed)
        ended = _contents(folder)
        runs += 1
        if max_runs is not None and runs >= max_runs:
            break
    return runs


def _contents(folder: Path | None) -> dict[str, bytes | None]:
    """What each Python file below `folder` holds now, by the path a change names it by."""
    if folder is None or not folder.is_dir():
        return {}
    inside = folder.resolve()
    return {str(path): regular_file_bytes(path) for path in sorted(inside.rglob("*.py"))
            if "__pycache__" not in path.parts}


def exercise_changes(folder: Path, stop_event: threading.Event | None = None,
                     debounce_ms: int = DEBOUNCE_MS, tick_ms: int = TICK_MS) -> Iterator[Batch]:
    """Debounced change batches of the Python files under `folder`, and an empty batch every
    tick of quiet. What is watched is the folder above it, by path: a folder replaced by
    another of its name (git checkout, an editor that saves by renaming) is watched as the new
    one, where a watch on the folder itself would follow the old one wherever it went."""
    import watchfiles

    inside = folder.resolve()

    def under_folder(change: object, path: str) -> bool:
        return path.endswith(".py") and Path(path).is_relative_to(inside)

    return watchfiles.watch(inside.parent, watch_filter=under_folder,
                            debounce=debounce_ms, rust_timeout=tick_ms, yield_on_timeout=True,
                            stop_event=stop_event)
