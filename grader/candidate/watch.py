"""`grader watch`: re-run the checks each time an exercise file is saved.

The loop is a plain function over an iterable of change batches, so tests drive it with a
scripted list or with the real watcher and a stop condition. In use the batches come from
watchfiles, debounced (an editor's save is often several writes), with an empty batch every
second while nothing changes, which is when the round's clock is redrawn. One warm worker
serves every run: torch is imported once, and each run forks fresh children that re-import the
candidate's files.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.text import Text

from grader.candidate import grading, mock
from grader.engine.safe_text import clean
from grader.render import views

if TYPE_CHECKING:
    import threading

    from rich.console import Console
    from rich.status import Status

    from grader.engine.workspace import Workspace
    from grader.runner import Request, Worker

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


class WatchSession:
    """What one watch does on a change (grade and redraw) and while idle (the clock)."""

    def __init__(self, workspace: Workspace, request: Request, new_worker: Callable[[], Worker],
                 console: Console, now: grading.Clock, ask: grading.Ask | None,
                 verify: Callable[[], None] = lambda: None) -> None:
        self.workspace = workspace
        self.verify = verify
        self.request = request
        self.new_worker = new_worker
        self.worker = new_worker()
        self.console = console
        self.now = now
        self.ask = ask
        self.status: Status | None = None

    def _waiting_text(self) -> str:
        round_ = mock.current_round(self.workspace)
        clock = f"{views.clock_line(round_, self.now()).plain} · " if round_ else ""
        return f"{clock}watching {self.workspace.exercises.name}/ (Ctrl-C to stop)"

    def _pause(self) -> None:
        if self.status is not None:
            self.status.stop()
            self.status = None

    def _wait(self) -> None:
        self.status = self.console.status(self._waiting_text())
        self.status.start()

    def on_change(self, changed: list[str]) -> None:
        """Grade, clear the screen and redraw; follow-ups may prompt, so the status pauses."""
        from grader.runner import GraderCrash

        self._pause()
        if not self.workspace.exercises.is_dir():
            # Moved aside or deleted (a checkout of another branch, say): grading nothing
            # would report every part as a stub, and record it so in a mock round.
            self.console.print(Text(f"{self.workspace.exercises.name}/ is not there: nothing "
                                    "graded until it is back (`grader restore` brings back a "
                                    "backup)", style="yellow"))
            self._wait()
            return
        names = clean(", ".join(Path(p).name for p in changed)) or "start"
        try:
            with self.console.status(Text(f"grading ({names})…")):
                try:
                    graded = grading.grade(self.workspace, self.request, self.worker, self.now)
                finally:
                    # Before anything runs again: a worker started after a poisoned run would
                    # load what it poisoned.
                    self.verify()
        except GraderCrash as exc:  # report it, and carry on with a fresh worker
            self.console.print(Text(f"the grader itself failed; please report this:\n{exc}",
                                    style="red"))
            self.worker.close()
            self.worker = self.new_worker()
            self._wait()
            return
        self.console.clear()
        self.console.print(Text(f"grader watch · changed: {names}", style="dim"))
        views.present(self.console, self.workspace, graded, self.now, self.ask)
        self._wait()

    def on_idle(self) -> None:
        if self.status is not None:
            self.status.update(self._waiting_text())

    def close(self) -> None:
        self._pause()
        self.worker.close()


def run_watch(workspace: Workspace, request: Request, console: Console, now: grading.Clock,
              ask: grading.Ask | None, batches: Iterable[Batch] | None = None,
              max_runs: int | None = None, verify: Callable[[], None] = lambda: None) -> int:
    """Grade once, then on every change until the batches end (Ctrl-C propagates)."""
    from grader.runner import Worker

    session = WatchSession(workspace, request, Worker, console, now, ask, verify)
    try:
        session.on_change([])
        return watch_loop(batches if batches is not None
                          else exercise_changes(workspace.exercises),
                          session.on_change, session.on_idle, max_runs)
    finally:
        session.close()
