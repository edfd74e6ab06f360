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
               on_idle: Callable[[], None] | None = None, max_runs: int | None = None) -> int:
    """Call on_change for each batch with exercise files in it, on_idle for the rest; stop
    when the batches end or after max_runs changes. Returns the number of runs."""
    runs = 0
    for batch in batches:
        changed = exercise_files(path for _, path in batch)
        if not changed:
            if on_idle is not None:
                on_idle()
            continue
        on_change(changed)
        runs += 1
        if max_runs is not None and runs >= max_runs:
            break
    return runs


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
