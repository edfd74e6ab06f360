"""A pool of warm workers for batch grading and the self-check.

Each worker imports torch once and then grades request after request, forking a fresh child for
every part of every request, so a batch pays the torch import N times (N = jobs), not once per
submission, and a submission's hang or crash still costs that part alone. Worker threads only
shuttle events: everything the caller sees arrives, in order of arrival, on the thread that
iterates `WorkerPool.grade`, so rendering and file writes need no locks.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from functools import partial

from grader.engine.results import CheckResult, PartResult, RunResult
from grader.runner import GraderCrash, OutOfMemory, Worker, strays
from grader.runner.protocol import Request


@dataclass(frozen=True)
class CheckDone:
    """One check of one request has a result."""

    request_id: str
    part_id: str
    check: CheckResult


@dataclass(frozen=True)
class PartDone:
    """Every check of one part of one request has a result."""

    request_id: str
    part: PartResult


@dataclass(frozen=True)
class RequestDone:
    """A request is finished: its result, or why the grader itself could not produce one
    (`by_the_machine`: the machine ended or refused the grading, not the grader or the code:
    see by_the_machine; the checks it did not run are undecided, not errors)."""

    request_id: str
    result: RunResult | None
    error: str | None = None
    by_the_machine: bool = False


PoolEvent = CheckDone | PartDone | RequestDone
_STOP = None


def by_the_machine(exc: Exception) -> bool:
    """Whether the machine, not the grader, kept a request from a result: it ran out of
    memory, had no process to start a worker with (strays.retried), or refused this process
    or the worker a process, a file or memory (strays.SHORT_OF: a neighbour can fill the
    machine's table of open files, and a grader run as an ordinary user gets no file past
    it)."""
    return isinstance(exc, OutOfMemory | strays.NoProcessLeft) \
        or isinstance(exc, OSError) and exc.errno in strays.SHORT_OF \
        or isinstance(exc, GraderCrash) and strays.machine_short(str(exc))


def failure(exc: Exception) -> str:
    """Why a worker produced no result for a request, as its row says (a crash of the worker,
    or the machine's failure, speaks for itself; anything else is named)."""
    if by_the_machine(exc):
        return str(exc)
    why = str(exc) if isinstance(exc, GraderCrash | OSError) else f"{type(exc).__name__}: {exc}"
    return f"the grader itself failed: {why}"


def _check_done(events: queue.Queue[PoolEvent], request_id: str, part_id: str,
                check: CheckResult) -> None:
    events.put(CheckDone(request_id, part_id, check))


def _part_done(events: queue.Queue[PoolEvent], request_id: str, part: PartResult) -> None:
    events.put(PartDone(request_id, part))


class WorkerPool:
    """`jobs` warm workers grading requests from a shared queue.

    A worker that crashes (a grader bug, a killed process) costs its current request only: that
    request is reported with the error and a fresh worker takes the next one.
    """

    def __init__(self, jobs: int, start_worker: Callable[[], Worker] | None = None,
                 sandbox: bool = False) -> None:
        if jobs < 1:
            raise ValueError("a pool needs at least one job")
        self.jobs = jobs
        self._start_worker = start_worker or (lambda: Worker(sandbox=sandbox))
        self._workers: list[Worker] = []
        self._idle: list[Worker] = []
        self._lock = threading.Lock()
        self._closed = False

    def cuda(self) -> bool:
        """Whether the workers see CUDA (a worker is started to ask, and kept for the batch);
        False when none can start (each request then reports that failure itself)."""
        with self._lock:
            known = next(iter(self._workers), None)
        if known is None:
            try:
                known = self._enlist()
            except (GraderCrash, OSError):
                return False
            with self._lock:
                self._idle.append(known)
        return known.cuda

    def grade(self, requests: Iterable[Request]) -> Iterator[PoolEvent]:
        """Grade every request; yield events as they happen, ending after the last RequestDone.

        Leaving the loop early (an exception, Ctrl-C, a break) kills the workers.
        """
        pending: queue.Queue[Request | None] = queue.Queue()
        events: queue.Queue[PoolEvent] = queue.Queue()
        count = 0
        for request in requests:
            pending.put(request)
            count += 1
        threads = [threading.Thread(target=self._serve, args=(pending, events), daemon=True)
                   for _ in range(min(self.jobs, count))]
        for _ in threads:
            pending.put(_STOP)
        finished = False
        try:
            for thread in threads:
                try:
                    strays.retried(thread.start)
                except strays.NoProcessLeft:
                    if thread is threads[0]:
                        raise
                    break  # fewer jobs at once: the machine has no thread to give another
            done = 0
            while done < count:
                event = events.get()
                if isinstance(event, RequestDone):
                    done += 1
                yield event
            finished = True
        finally:
            if not finished:
                self.close(kill=True)
            # Each thread ends by closing its worker, which is bounded (a worker that does not
            # exit when asked is killed): waiting for them all never hangs, however slow the
            # machine, and no worker outlives the batch.
            for thread in threads:
                if thread.ident is not None:  # started (one the machine refused never was)
                    thread.join()

    def _serve(self, pending: queue.Queue[Request | None],
               events: queue.Queue[PoolEvent]) -> None:
        """One thread: take requests until the stop mark, through one (replaceable) worker."""
        worker: Worker | None = None
        try:
            while (request := pending.get()) is not _STOP:
                assert request is not None
                if self._closed:
                    events.put(RequestDone(request.id, None, "grading was interrupted"))
                    continue
                try:
                    worker = worker or self._enlist()
                    result = worker.run(request, on_check=partial(_check_done, events, request.id),
                                        on_part=partial(_part_done, events, request.id))
                    events.put(RequestDone(request.id, result))
                except Exception as exc:  # noqa: BLE001 - any failure costs this request only
                    if worker is not None:
                        worker.kill()
                        self._retire(worker)
                    worker = None
                    events.put(RequestDone(request.id, None, failure(exc), by_the_machine(exc)))
        finally:
            if worker is not None:
                self._retire(worker)

    def _enlist(self) -> Worker:
        with self._lock:
            if self._idle:
                return self._idle.pop()
        worker = self._start_worker()
        with self._lock:
            if self._closed:
                worker.kill()
                worker.close()
                raise GraderCrash("grading was interrupted")
            self._workers.append(worker)
        return worker

    def _retire(self, worker: Worker) -> None:
        """Close a worker this thread owns (gracefully, unless it was killed already)."""
        with self._lock:
            if worker in self._workers:
                self._workers.remove(worker)
        worker.close()

    def close(self, kill: bool = False) -> None:
        """Kill every worker mid-request when `kill` (the threads that own them then close
        them); otherwise the workers are closed by their threads when the batch ends. A worker
        started but never given a request is closed here."""
        with self._lock:
            self._closed = self._closed or kill
            workers = list(self._workers)
            idle, self._idle = self._idle, []
        if kill:
            for worker in workers:
                worker.kill()
        for worker in idle:
            self._retire(worker)

    def __enter__(self) -> WorkerPool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close(kill=exc[0] is not None)

