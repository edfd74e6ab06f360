"""Grading a batch on a Dask cluster: the coach's side (the worker's: cluster_worker.py).

`grade --cluster tcp://HOST:PORT` stages and scans every submission here, as a local batch does,
then hands the requests to ClusterGraders instead of a local WorkerPool (both are
grader.coach.batch.Graders): the rows, the JSON, CSV, report and Gradescope outputs are made by
the same code from the same events, in the order given.

What Dask does for us, and why it is enough:
- a worker that dies mid-submission: the scheduler runs its task again on another worker (a
  task that takes down `distributed.scheduler.allowed-failures` + 1 workers in a row is given
  up: its row says so, and no other row changes). Each submission is one task whose answer is
  read once, so a submission graded twice still makes one row;
- warm workers: the batch's plugin keeps one judge process per worker for every task;
- refusals: a worker whose grader is not the coach's, or that cannot make a sandbox (unless
  --no-sandbox), never gets the batch's resource, so no task is sent there; the coach is told
  each such worker's reason, and the batch stops (ClusterError) when no worker may grade.
"""

from __future__ import annotations

import queue
import time
import uuid
from collections.abc import Callable, Iterable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from grader import DISTRIBUTION
from grader.engine.results import CheckResult
from grader.runner.pool import CheckDone, PartDone, PoolEvent, RequestDone
from grader.runner.protocol import Request

if TYPE_CHECKING:
    from distributed import Client, Future

    from grader.coach.batch import GradingConfig
    from grader.coach.cluster_worker import Graded, Readiness

CLUSTER_INSTALL = f'pip install "{DISTRIBUTION}[cluster]"'
"""How to add Dask's distributed, on the coach's machine and on every worker."""
CONNECT_TIMEOUT_S = 10
"""How long the coach waits for the scheduler to answer (a cluster on a LAN answers in ms)."""
WATCH_S = 2.0
"""How often the coach, waiting on the cluster, looks for a worker that may grade the batch."""
ABANDON_AFTER = "grader.abandon-after"
ABANDON_AFTER_S = 120
"""How long the coach waits with no such worker before the submissions left get `error` rows
(Dask's configuration `grader.abandon-after`, e.g. DASK_GRADER__ABANDON_AFTER=30): long enough
for a nanny to restart a worker and its judge, on a busy machine."""
RETRIES = 1
"""A task that raised is run once more (a worker that refused it after all, by a race with
its plugin); a dead worker's task is run again by the scheduler, which counts those apart."""


class ClusterError(Exception):
    """The cluster cannot grade this batch (distributed missing, no scheduler there, no worker
    that may grade); the message says why and what to do."""


def require_distributed() -> None:
    """ClusterError, saying how to install it, where Dask's distributed cannot be imported."""
    try:
        import distributed  # noqa: F401 - imported to learn that it can be
    except ImportError as exc:
        raise ClusterError(f"--cluster needs Dask's distributed, which cannot be imported "
                           f"here ({exc}): {CLUSTER_INSTALL}") from exc


def _check_address(address: str) -> None:
    """ClusterError where `address` cannot name a scheduler (Client would try it for its whole
    timeout, then fail with Dask's words)."""
    from distributed.comm.addressing import parse_address
    from distributed.comm.registry import get_backend

    try:
        scheme, location = parse_address(address)
        get_backend(scheme)
    except ValueError as exc:
        location, why = "", f" ({exc})"
    else:
        why = ""
    if not location:
        raise ClusterError(f"{address!r} is not a Dask scheduler's address such as "
                           f"tcp://10.0.0.5:8786{why}")


def reported(message: Any) -> tuple[str, str, str, CheckResult] | None:
    """A check a worker reported while grading (cluster_worker.GraderPlugin.report): its
    request, part, id and result; None for a message that is not one (the topic is the
    batch's, but any client of the scheduler could log to it)."""
    try:
        check = CheckResult.from_wire(message["check"])
        return str(message["request"]), str(message["part"]), check.id, check
    except (AttributeError, KeyError, TypeError, ValueError):
        return None


def _ignore(worker: str, why: str) -> None:
    """The default of `refused`: say nothing."""


class ClusterGraders:
    """A batch's submissions graded by the workers of the Dask scheduler at `address`, under
    `config` (its sandbox and seeding). `refused(worker, why)` is told of each worker that
    will not grade this batch."""

    def __init__(self, address: str, config: GradingConfig,
                 refused: Callable[[str, str], None] = _ignore) -> None:
        require_distributed()
        from distributed import Client

        from grader.coach.cluster_worker import GraderPlugin, readiness
        from grader.engine.integrity import installed_fingerprint

        _check_address(address)
        try:
            self.client: Client = Client(address, timeout=CONNECT_TIMEOUT_S,
                                         set_as_default=False)
        except (OSError, ValueError, TypeError) as exc:
            raise ClusterError(f"cannot reach a Dask scheduler at {address}: {exc}") from exc
        self.name = f"grader-{uuid.uuid4().hex}"
        self._futures: list[Future[Graded]] = []
        self._abandoned = False
        try:
            self.client.register_plugin(GraderPlugin(
                self.name, installed_fingerprint(), config.sandbox, config.inputs),
                name=self.name)
            states: dict[str, Readiness] = self.client.run(readiness, self.name)
        except BaseException:
            self.close()
            raise
        for worker, state in sorted(states.items()):
            if state.refusal is not None:
                refused(worker, state.refusal)
        self._ready = [state for state in states.values() if state.refusal is None]
        if not self._ready:
            self.close()
            raise ClusterError(f"no worker of the cluster at {address} may grade: " + (
                "; ".join(f"{w}: {s.refusal}" for w, s in sorted(states.items()))
                or "it has no workers (start some: docs/cluster.md)"))

    def cuda(self) -> bool:
        return any(state.cuda for state in self._ready)

    def grade(self, requests: Iterable[Request]) -> Iterator[PoolEvent]:
        """Send every request, its files with it; yield each check as a worker reports it
        (for the coach's progress), then once a submission is graded its parts, any check
        not reported yet, and its RequestDone, in order of completion."""
        from distributed import Future

        from grader.coach.cluster_worker import Parcel, grade_parcel, pack

        arrivals: queue.Queue[Future[Graded] | tuple[float, Any]] = queue.Queue()
        self.client.subscribe_topic(self.name, arrivals.put)
        ids = {}
        for request in requests:
            parcel = Parcel(replace(request, root="", hidden_seed=None),
                            pack(Path(request.root)))
            future = self.client.submit(grade_parcel, self.name, parcel,
                                        key=f"{self.name}-{request.id}",
                                        resources={self.name: 1}, retries=RETRIES)
            self._futures.append(future)
            ids[future.key] = request.id
            future.add_done_callback(arrivals.put)
        told: set[tuple[str, str, str]] = set()
        left = len(ids)  # this call's: a batch's regrades come in a call of their own
        alone_since: float | None = None
        while left:
            try:
                arrival = arrivals.get(timeout=WATCH_S)
            except queue.Empty:
                alone_since = self._abandon_when_alone(alone_since)
                continue
            if not isinstance(arrival, Future):
                check = reported(arrival[1])
                if check is not None and check[:3] not in told:
                    told.add(check[:3])
                    yield CheckDone(*check[:2], check[3])
                continue
            left -= 1
            request_id = ids[arrival.key]
            graded = self._answer(arrival)
            for part in graded.result.parts if graded.result is not None else ():
                for check_ in part.checks:
                    if (request_id, part.id, check_.id) not in told:
                        yield CheckDone(request_id, part.id, check_)
                yield PartDone(request_id, part)
            yield RequestDone(request_id, graded.result, graded.error, graded.by_the_machine)

    def _abandon_when_alone(self, since: float | None) -> float | None:
        """While no worker that may grade the batch is left (every one died or left, and no
        nanny brought one back), cancel what is left once that has lasted `abandon-after`
        seconds: their rows say why, instead of the coach waiting for ever. When that began
        (None: a worker is there)."""
        import dask.config

        workers = self.client.scheduler_info(n_workers=-1)["workers"].values()
        if any(worker.get("resources", {}).get(self.name) for worker in workers):
            return None
        now = time.monotonic()
        since = now if since is None else since
        if now - since >= float(dask.config.get(ABANDON_AFTER, ABANDON_AFTER_S)):
            self._abandoned = True
            self.client.cancel([f for f in self._futures if not f.done()])
        return since

    def _answer(self, future: Future[Graded]) -> Graded:
        """What a task answered, or why the cluster gave up on it."""
        from distributed import KilledWorker

        from grader.coach.cluster_worker import Graded

        if future.cancelled() and self._abandoned:
            return Graded(None, "the grader itself failed: no worker of the cluster that may "
                          "grade this batch was left to grade it")
        try:
            answer = future.result()
        except KilledWorker:
            return Graded(None, "the grader itself failed: every worker that graded this "
                          "submission died while grading it")
        except Exception as exc:  # noqa: BLE001 - one submission's failure costs its row only
            return Graded(None, f"the grader itself failed on the cluster: "
                          f"{type(exc).__name__}: {exc}")
        assert isinstance(answer, Graded)
        return answer

    def close(self) -> None:
        """Cancel what is left, take the plugin off the workers (their judges stop), and
        disconnect."""
        try:
            if self._futures:
                self.client.cancel(self._futures)
            self.client.unsubscribe_topic(self.name)
            self.client.unregister_worker_plugin(self.name)
        except Exception:  # noqa: BLE001, S110 - closing: a gone scheduler has nothing to undo
            pass
        finally:
            self.client.close()

    def __enter__(self) -> ClusterGraders:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
