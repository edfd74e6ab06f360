"""The worker side of grading on a Dask cluster (the coach's side: grader/coach/cluster.py).

A coach's batch registers one GraderPlugin on every worker of the cluster (and on each that
joins later). The plugin is the batch on that machine:

- it decides whether this worker may grade: its installed grader must be the coach's (version,
  package and references: grader.engine.integrity.installed_fingerprint), and it must be able
  to make a sandbox unless the coach passed --no-sandbox. A worker that may grade is given the
  batch's resource (one unit), and the coach's tasks ask for it, so the scheduler never sends a
  submission to a worker that refused; one that refused keeps the reason for the coach to show;
- it keeps one warm judge process (grader.runner.Worker, which imports torch once) for every
  task of the batch, as a local pool's worker does; a judge that fails costs its task's row and
  is replaced by the next task;
- it holds the instructor's seeding (the secret among it). The plugin is sent once, when the
  coach registers it, so the secret is in no task's arguments or key and never on the
  dashboard; a task carries only the seed any output shows, and the hidden seed is drawn here,
  from the submission's files as they arrived.

A task's argument is a Parcel: the runner Request (its `root` and `hidden_seed` left empty) and
the submission's staged folder as bytes (a tar archive), so no machine shares a file system
with the coach. Its answer is a Graded. Both cross processes, so both are plain dataclasses of
plain data.
"""

from __future__ import annotations

import asyncio
import io
import tarfile
import tempfile
import threading
from dataclasses import asdict, dataclass, replace
from functools import partial
from pathlib import Path

from distributed import Worker as DaskWorker
from distributed import get_worker
from distributed.diagnostics.plugin import WorkerPlugin

from grader.engine.integrity import installed_fingerprint
from grader.engine.results import CheckResult, RunResult
from grader.engine.rounds import get_round
from grader.engine.secret import Seeding
from grader.runner import OutOfMemory, Worker
from grader.runner.pool import failure
from grader.runner.protocol import Request
from grader.runner.sandbox import support


@dataclass(frozen=True)
class Parcel:
    """One submission as a task carries it: the request, and the staged folder's files."""

    request: Request
    files: bytes


@dataclass(frozen=True)
class Graded:
    """A task's answer: the submission's result, or why the grader produced none (and whether
    the machine, not the grader, ended it: pool.RequestDone's `by_the_machine`)."""

    result: RunResult | None
    error: str | None = None
    by_the_machine: bool = False


@dataclass(frozen=True)
class Readiness:
    """What a worker tells the coach once the batch's plugin is set up: why it refuses to
    grade (None: it grades), and whether its judge sees CUDA."""

    refusal: str | None
    cuda: bool = False


class Refused(Exception):
    """This worker may not grade the batch (a task reached it all the same)."""


def pack(root: Path) -> bytes:
    """A staged submission's folder as bytes (an uncompressed tar archive: the files are
    small, and the network is faster than the compression)."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as archive:
        archive.add(root, arcname=".")
    return buffer.getvalue()


def unpack(files: bytes, root: Path) -> None:
    """The files of `pack` under `root`, refusing any entry that would land outside it or is
    not a plain file or folder (tarfile's "data" filter)."""
    with tarfile.open(fileobj=io.BytesIO(files), mode="r") as archive:
        archive.extractall(root, filter="data")


class GraderPlugin(WorkerPlugin):
    """One batch on one worker (see the module's docstring)."""

    _ready: Readiness
    _judge: Worker | None
    _worker: DaskWorker
    _lock: threading.Lock

    def __init__(self, name: str, fingerprint: str, sandbox: bool, seeding: Seeding) -> None:
        # Only plain data here: the coach pickles the plugin to send it; the rest is made on
        # the worker, in setup.
        self.name = name
        self.fingerprint = fingerprint
        self.sandbox = sandbox
        self.seeding = seeding

    @property
    def resource(self) -> str:
        """The resource a worker that grades this batch holds, and its tasks ask for."""
        return self.name

    def refusal(self) -> str | None:
        """Why this machine may not grade the batch; None when it may."""
        if installed_fingerprint() != self.fingerprint:
            return ("its installed grader differs from the coach's (version, code or round "
                    "data): install the same grader on every machine")
        if self.sandbox:
            found = support()
            if not found.usable:
                return (f"it cannot make a sandbox ({found.why}); install bubblewrap there, "
                        "or grade with --no-sandbox")
        return None

    async def setup(self, worker: DaskWorker) -> None:
        self._judge = None
        self._worker = worker
        self._lock = threading.Lock()
        refusal = await asyncio.to_thread(self.refusal)
        if refusal is None:
            try:
                self._judge = await asyncio.to_thread(Worker, self.sandbox)
            except Exception as exc:  # noqa: BLE001 - the coach is told why, the worker lives
                refusal = f"its judge process did not start: {failure(exc)}"
        self._ready = Readiness(refusal, bool(self._judge and self._judge.cuda))
        if refusal is None:
            await worker.set_resources(**{self.resource: 1})

    async def teardown(self, worker: DaskWorker) -> None:
        if self._ready.refusal is None:
            await worker.set_resources(**{self.resource: 0})
        with self._lock:
            judge, self._judge = self._judge, None
        if judge is not None:
            await asyncio.to_thread(judge.close)

    def readiness(self) -> Readiness:
        return self._ready

    def grade(self, parcel: Parcel) -> Graded:
        """Grade one submission with the warm judge (started again if the last one failed)."""
        if self._ready.refusal is not None:
            raise Refused(self._ready.refusal)
        with self._lock, tempfile.TemporaryDirectory(prefix="grader-cluster-") as tmp:
            root = Path(tmp)
            unpack(parcel.files, root)
            request = parcel.request
            request = replace(request, root=str(root), **self.seeding.request_seeds(
                get_round(request.round), root))
            try:
                self._judge = self._judge or Worker(self.sandbox)
                return Graded(self._judge.run(request, on_check=partial(self.report, request.id)))
            except Exception as exc:  # noqa: BLE001 - any failure costs this submission only
                if self._judge is not None:
                    self._judge.kill()
                    self._judge.close()
                self._judge = None
                return Graded(None, failure(exc), isinstance(exc, OutOfMemory))


    def report(self, request_id: str, part_id: str, check: CheckResult) -> None:
        """Tell the coach of a check as it is graded, for its progress (the batch's topic;
        grader.coach.cluster.reported reads it)."""
        self._worker.log_event(self.name, {"request": request_id, "part": part_id,
                                           "check": asdict(check)})


def _plugin(worker: DaskWorker, name: str) -> GraderPlugin:
    plugin = worker.plugins.get(name)
    if not isinstance(plugin, GraderPlugin):
        raise Refused("the batch's plugin is not set up on this worker")
    return plugin


def readiness(name: str, dask_worker: DaskWorker) -> Readiness:
    """Run on each worker by the coach (Client.run, which passes `dask_worker`): the batch's
    plugin's readiness."""
    return _plugin(dask_worker, name).readiness()


def grade_parcel(name: str, parcel: Parcel) -> Graded:
    """The task: grade one submission of batch `name` on this worker."""
    return _plugin(get_worker(), name).grade(parcel)
