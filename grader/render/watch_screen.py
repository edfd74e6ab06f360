"""The watch screen: grade on each change, clear and redraw the scorecard, and keep the round's
clock ticking in a status line while nothing changes (the loop itself is
grader.candidate.watch's)."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from rich.text import Text

from grader.candidate import grading, mock, watch
from grader.engine.safe_text import clean
from grader.render import views

if TYPE_CHECKING:
    from rich.console import Console
    from rich.status import Status

    from grader.engine.workspace import Workspace
    from grader.runner import Request, Worker


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
            self.console.print(Text(exc.report, style="red"))
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
              ask: grading.Ask | None, batches: Iterable[watch.Batch] | None = None,
              max_runs: int | None = None, verify: Callable[[], None] = lambda: None) -> int:
    """Grade once, then on every change until the batches end (Ctrl-C propagates)."""
    from grader.runner import Worker

    session = WatchSession(workspace, request, Worker, console, now, ask, verify)
    try:
        session.on_change([])
        return watch.watch_loop(batches if batches is not None
                                else watch.exercise_changes(workspace.exercises),
                                session.on_change, session.on_idle, max_runs,
                                workspace.exercises)
    finally:
        session.close()
