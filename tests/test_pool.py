"""The warm worker pool behind batch grading and the self-check."""

from __future__ import annotations

import threading
import time
from dataclasses import replace
from pathlib import Path

import pytest

from grader.coach.selfcheck import write_exercises
from grader.runner import GraderCrash, Worker
from grader.runner.pool import CheckDone, PartDone, RequestDone, WorkerPool
from grader.runner.protocol import Request

from helpers import PREFIX, LentWorker, held_by_a_tracer, wait_until


def stub_request(tmp_path: Path, name: str) -> Request:
    root = write_exercises(tmp_path / name, PREFIX, "numpy", "stubs")
    return Request(id=name, root=str(root), round=PREFIX.id, flavor="numpy",
                   parts=["part2", "part4"], seed=1, timeout_s=30)


def test_every_request_reports_its_checks_parts_and_end(grading, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """In the session's worker (the solution matrix grades through a pool of two)."""
    requests = [stub_request(tmp_path, f"r{i}") for i in range(3)]
    with WorkerPool(1, start_worker=lambda: LentWorker(grading.worker)) as pool:
        events = list(pool.grade(requests))

    for request in requests:
        mine = [e for e in events if e.request_id == request.id]
        assert isinstance(mine[-1], RequestDone) and mine[-1].result is not None
        assert [e.part.id for e in mine if isinstance(e, PartDone)] == ["part2", "part4"]
        checks = [e for e in mine if isinstance(e, CheckDone)]
        assert len(checks) == sum(len(p.checks) for p in mine[-1].result.parts)
        assert mine[-1].result.score == 0.0


def test_a_stopped_worker_is_continued_and_a_traced_one_killed_and_replaced(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Code under test that sends SIGSTOP to the worker (practice mode: its parent) is graded
    on what it does: the watchdog continues the worker at its next look, as a tool's pause
    would be, and the same worker grades the next request. A worker a tracer holds (a
    debugger) stays silent: the watchdog kills it once it has been silent past the request's
    timeout, that request is reported, and a fresh worker grades the next."""
    import grader.runner

    monkeypatch.setattr(grader.runner, "WATCHDOG_SLACK_S", 1.0)
    started: list[Worker] = []

    def start() -> Worker:
        started.append(Worker())
        return started[-1]

    stopper = stub_request(tmp_path, "stops")
    (Path(stopper.root) / "exercises" / "part2_out_of_place.py").write_text(
        "import os, signal\nos.kill(os.getppid(), signal.SIGSTOP)\n")
    requests = [replace(stopper, timeout_s=1.0), stub_request(tmp_path, "next")]
    with WorkerPool(1, start_worker=start) as pool:
        done = {e.request_id: e for e in pool.grade(requests) if isinstance(e, RequestDone)}
    stopped = done["stops"].result
    assert stopped is not None, done["stops"].error
    assert stopped.parts[0].checks and stopped.score == 0.0  # no function there
    assert done["next"].result is not None
    assert len(started) == 1

    started[:] = [Worker()]
    held_by_a_tracer(started[0].process.pid)
    lent = iter(started[:])
    traced, after = stub_request(tmp_path, "traced"), stub_request(tmp_path, "after")
    with WorkerPool(1, start_worker=lambda: next(lent, None) or start()) as pool:
        done = {e.request_id: e for e in pool.grade([replace(traced, timeout_s=1.0), after])
                if isinstance(e, RequestDone)}
    assert done["traced"].result is None
    assert "sat idle for 2 s without a word (stopped or wedged) and was killed (its processes " \
        f"then: {started[0].process.pid} stopped by a tracer" in (done["traced"].error or "")
    assert done["after"].result is not None
    assert len(started) == 2
    assert all(w.process.poll() is not None for w in started)


def test_leaving_the_loop_early_stops_every_worker(tmp_path: Path) -> None:
    started: list[Worker] = []

    def start() -> Worker:
        started.append(Worker())
        return started[-1]

    requests = [stub_request(tmp_path, f"r{i}") for i in range(4)]
    pool = WorkerPool(2, start_worker=start)
    events = pool.grade(requests)
    for event in events:
        if isinstance(event, CheckDone):
            break
    events.close()  # what a KeyboardInterrupt in the loop body amounts to

    assert started and all(w.process.poll() is not None for w in started)


def _children(pid: int) -> list[int]:
    found = []
    for task in Path(f"/proc/{pid}/task").glob("*"):
        text = (task / "children").read_text().split()
        found += [int(p) for p in text]
    return found


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, IndexError):
        return False
    return state != "Z"


@pytest.mark.skipif(not Path("/proc/self/task").exists(), reason="needs Linux /proc")
def test_killing_a_worker_kills_the_candidate_process_it_forked(tmp_path: Path) -> None:
    root = write_exercises(tmp_path / "hang", PREFIX, "numpy", "stubs")
    (root / "exercises" / "part1_inplace.py").write_text("while True:\n    pass\n")
    request = Request(id="hang", root=str(root), round=PREFIX.id, flavor="numpy",
                      parts=["part1"], seed=1, timeout_s=600)
    worker = Worker()
    errors: list[Exception] = []

    def grade() -> None:
        try:
            worker.run(request)
        except GraderCrash as exc:
            errors.append(exc)

    thread = threading.Thread(target=grade)
    thread.start()
    wait_until(lambda: bool(_children(worker.process.pid)), worker.process.pid, 60)
    children = _children(worker.process.pid)

    worker.kill()
    thread.join(timeout=30)
    worker.close()

    deadline = time.monotonic() + 30
    while any(_alive(c) for c in children) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not any(_alive(c) for c in children)
    assert errors and not thread.is_alive()
    assert str(errors[0]).startswith("the grading worker stopped unexpectedly (killed by "
                                     "signal SIGKILL):")


def test_a_worker_the_machine_has_no_process_for_leaves_its_request_to_the_machine(
        tmp_path: Path) -> None:
    """A worker that cannot be started (the process table stayed full through strays.retried's
    waits) costs its request a result, which says so and is the machine's failure (its checks
    undecided in a batch), not "the grader itself failed"; the next request gets a worker."""
    from grader.runner import strays

    refused = strays.NoProcessLeft("no process could be started: the process table stayed "
                                   "full", False)
    tries: list[int] = []

    def start() -> Worker:
        tries.append(1)
        if len(tries) == 1:
            raise refused
        raise GraderCrash("a second start: enough to tell the requests apart")

    requests = [stub_request(tmp_path, "first"), stub_request(tmp_path, "second")]
    with WorkerPool(1, start_worker=start) as pool:
        done = {e.request_id: e for e in pool.grade(requests) if isinstance(e, RequestDone)}
    assert (done["first"].error, done["first"].by_the_machine) == (str(refused), True)
    assert (done["second"].error, done["second"].by_the_machine) == (
        "the grader itself failed: a second start: enough to tell the requests apart", False)


def test_a_grading_the_machine_refused_a_process_a_file_or_memory_is_the_machines() -> None:
    """A worker that could not be started, or died, because the machine refused a process, a
    file or memory (a neighbour filled its table of open files: a grader run as an ordinary
    user gets no file past it) leaves its checks undecided, not errors of the grader's; any
    other failure is the grader's."""
    import errno

    from grader.runner import GraderCrash
    from grader.runner.pool import by_the_machine, failure

    machine = [OSError(errno.ENFILE, "Too many open files in system"),
               OSError(errno.EAGAIN, "Resource temporarily unavailable"),
               GraderCrash("the worker ended: OSError: [Errno 23] Too many open files in system"),
               GraderCrash("python: error while loading shared libraries: libm.so.6: cannot "
                           "open shared object file: Error 23")]
    grader_s = [OSError(errno.EACCES, "Permission denied"), GraderCrash("KeyError: 'files'"),
                GraderCrash("the worker ended: Error 230"), ValueError("Error 23")]
    assert all(by_the_machine(exc) for exc in machine)
    assert not any(by_the_machine(exc) for exc in grader_s)
    assert [failure(exc).startswith("the grader itself failed") for exc in machine + grader_s] \
        == [False] * len(machine) + [True] * len(grader_s)
