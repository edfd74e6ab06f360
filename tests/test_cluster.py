"""`grader grade --cluster`: a Dask scheduler and workers, each a process of its own on
127.0.0.1 as on real machines, grade a class as a local `grade` does, row for row, and lose
nothing when a worker dies mid-batch; a worker that may not grade says why."""

from __future__ import annotations

import importlib.util
import json
import os
import pickle
import re
import shutil
import signal
import subprocess
import sys
import time
import tomllib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from grader.engine.secret import SECRET_ENV

from helpers import NO_SANDBOX, REPO, SESSION_ENV, finish, run_grader, wait_until

pytestmark = [
    pytest.mark.skipif(importlib.util.find_spec("distributed") is None,
                       reason="Dask's distributed is not installed (the [cluster] extra)"),
    pytest.mark.xdist_group("cluster"),
]

ADVERSARIES = Path(__file__).parent / "adversaries"
CLASS = ("honest_correct", "honest_wrong", "forge_the_channel", "stop_the_executor",
         "scavenge_the_grader")
"""Honest and hostile submissions (tests/adversaries)."""
SLOW = "idle_instead_of_working"
"""A submission that hangs until its check's timeout (4 s): a worker is killed grading it."""
COACH = 'parts = ["part1", "part2"]\ntimeout = 4\nvary_inputs = "per-submission"\n'
SECRET = "the-coach-secret-0b7e51"
SANDBOX = ["--no-sandbox"] if NO_SANDBOX else []
START_S = 60


class Cluster:
    """A `dask scheduler` and its `dask worker`s (one thread each, no nanny: a killed worker
    stays dead), each in a session of its own so that killing one takes its judges too."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        folder.mkdir(parents=True, exist_ok=True)
        self.file = folder / "scheduler.json"
        self.processes: list[subprocess.Popen[bytes]] = []
        self._start("scheduler", "--scheduler-file", self.file, "--host", "127.0.0.1",
                    "--port", "0", "--no-dashboard")
        wait_until(self.file.is_file, self.processes[0].pid, START_S, 0.2,
                   lambda: self.log("scheduler"))
        self.address: str = json.loads(self.file.read_text())["address"]

    def _start(self, what: str, *args: str | Path, env: dict[str, str] | None = None
               ) -> subprocess.Popen[bytes]:
        log = (self.folder / f"{what}-{len(self.processes)}.log").open("wb")
        process = subprocess.Popen(
            [sys.executable, "-m", f"distributed.cli.dask_{what}", *map(str, args)],
            env=env or SESSION_ENV, stdout=log, stderr=subprocess.STDOUT, cwd=self.folder,
            start_new_session=True)
        self.processes.append(process)
        return process

    def add_worker(self, env: dict[str, str] | None = None) -> subprocess.Popen[bytes]:
        """A worker, once the scheduler knows it."""
        count = len(self.workers()) + 1
        process = self._start("worker", self.address, "--nthreads", "1", "--no-nanny",
                              "--host", "127.0.0.1", "--no-dashboard", env=env)
        wait_until(lambda: process.poll() is not None or len(self.workers()) >= count,
                   process.pid, START_S, 0.2, lambda: self.log("worker"))
        assert process.poll() is None, self.log("worker")
        return process

    def workers(self) -> dict[str, Any]:
        from distributed import Client

        with Client(self.address, timeout=START_S) as client:
            found: dict[str, Any] = client.scheduler_info(n_workers=-1)["workers"]
            return found

    def log(self, what: str) -> str:
        return "\n".join(p.read_text(errors="replace")
                         for p in sorted(self.folder.glob(f"{what}-*.log")))

    def close(self) -> None:
        for process in reversed(self.processes):
            kill(process)


def kill(process: subprocess.Popen[bytes]) -> None:
    """The process and everything in its session, at once."""
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    process.wait()


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    """A scheduler and two workers; the last test of the module kills one."""
    made = Cluster(tmp_path_factory.mktemp("cluster"))
    try:
        made.add_worker()
        made.add_worker()
        yield made
    finally:
        made.close()


def write_class(root: Path, names: tuple[str, ...] = CLASS) -> Path:
    """The submissions named (one folder each), an empty one (it cannot be staged), and the
    coach's settings beside them."""
    for i, name in enumerate(names):
        shutil.copytree(ADVERSARIES / name / "submission", root / "class" / f"{i}-{name}")
    (root / "class" / "9-empty").mkdir(parents=True)
    (root / "coach.toml").write_text(COACH)
    return root


def grade(root: Path, *args: str, env: dict[str, str] | None = None
          ) -> subprocess.CompletedProcess[str]:
    return run_grader("grade", root / "class", "--config", root / "coach.toml", "--seed", "3",
                      "--json", "--csv", root / "grades.csv", *SANDBOX, *args, cwd=root,
                      env={SECRET_ENV: SECRET, **(env or {})})


def rows(done: subprocess.CompletedProcess[str]) -> list[dict[str, Any]]:
    """The JSON rows, timings and temporary folders aside (they differ between any two
    runs)."""
    assert done.returncode == 0, done.stdout + done.stderr
    return [untimed(row) for row in json.loads(done.stdout)["submissions"]]


STAGED = re.compile(r"/tmp/grader-(batch|cluster)-[^/]+/(\d+/)?")
"""Where a submission was graded, as its printed warnings show it: a fresh temporary folder
for each batch, local or not."""


def untimed(doc: Any) -> Any:
    if isinstance(doc, str):
        return STAGED.sub("<submission>/", doc)
    if isinstance(doc, dict):
        return {k: untimed(v) for k, v in doc.items() if k != "duration_s"}
    if isinstance(doc, list):
        return [untimed(v) for v in doc]
    return doc


def expected(name: str) -> dict[str, Any]:
    found: dict[str, Any] = tomllib.loads((ADVERSARIES / name / "expect.toml").read_text())
    return found


@pytest.mark.slow
def test_the_cluster_grades_a_class_as_a_local_batch_does(cluster: Cluster,
                                                          tmp_path: Path) -> None:
    root = write_class(tmp_path)
    local = grade(root, "--jobs", "2")
    local_csv = (root / "grades.csv").read_text()
    remote = grade(root, "--cluster", cluster.address)
    assert rows(remote) == rows(local)
    assert (root / "grades.csv").read_text() == local_csv
    graded = rows(remote)
    assert [Path(row["path"]).name for row in graded] == [
        *(f"{i}-{name}" for i, name in enumerate(CLASS)), "9-empty"]
    for row, name in zip(graded, CLASS, strict=False):
        assert (row["status"], row["score"]) == (expected(name)["status"],
                                                expected(name).get("score", row["score"]))
    assert graded[-1]["status"] == "broken"
    assert SECRET not in remote.stdout + remote.stderr


@pytest.mark.slow
def test_the_secret_is_in_no_task(cluster: Cluster, tmp_path: Path,
                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """What the coach submits (key, function, arguments) never holds the secret, nor the
    hidden seed drawn from it: the worker's plugin holds the seeding. (The cluster here is
    the settings' [cluster] address.)"""
    from click.testing import CliRunner
    from distributed import Client

    from grader import cli

    sent: list[bytes] = []
    submit = Client.submit

    def recording(self: Client, func: Any, *args: Any, **kwargs: Any) -> Any:
        sent.append(pickle.dumps((func, args, kwargs)))
        return submit(self, func, *args, **kwargs)

    monkeypatch.setattr(Client, "submit", recording)
    root = write_class(tmp_path, ("honest_correct",))
    with (root / "coach.toml").open("a") as coach:  # the cluster named by the settings
        coach.write(f'[cluster]\naddress = "{cluster.address}"\n')
    done = CliRunner().invoke(cli.cli, [
        "grade", str(root / "class"), "--config", str(root / "coach.toml"), "--seed", "3",
        "--json", *SANDBOX], env={SECRET_ENV: SECRET})
    assert done.exit_code == 0, done.output
    assert len(sent) == 1
    assert SECRET.encode() not in sent[0]
    assert b"hidden_seed" in sent[0]


def kill_a_grading_worker(cluster: Cluster, root: Path, env: dict[str, str]
                          ) -> tuple[int, str, str]:
    """Grade the class on the cluster and kill the first worker seen grading, a second into
    its submission; the batch's exit status, stdout and stderr."""
    from distributed import Client

    with subprocess.Popen(
            [sys.executable, "-m", "grader", "grade", str(root / "class"), "--config",
             str(root / "coach.toml"), "--seed", "3", "--json", *SANDBOX, "--cluster",
             cluster.address], cwd=root, env={**SESSION_ENV, SECRET_ENV: SECRET, **env},
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) as batch:
        with Client(cluster.address, timeout=START_S) as client:
            busy: list[str] = []

            def grading() -> bool:
                busy[:] = [w for w, keys in client.processing().items() if keys]
                return bool(busy) or batch.poll() is not None

            wait_until(grading, batch.pid, START_S)
            assert busy, "the batch ended before any worker was seen grading"
            pid = client.run(os.getpid, workers=busy[:1])[busy[0]]
        victim = next(p for p in cluster.processes if p.pid == pid)
        time.sleep(1)  # well inside the slow submission's 4 s
        kill(victim)
        stdout, stderr = finish(batch, 120)
    return batch.returncode, stdout, stderr


@pytest.mark.slow
def test_a_worker_that_dies_mid_submission_loses_nothing(cluster: Cluster,
                                                         tmp_path: Path) -> None:
    """One of the two workers is killed while it grades: its submission is graded again on
    the other, and every row is there once, as it would be without the death. The coach's
    progress shows the checks as they come."""
    names = (SLOW, SLOW, "honest_correct")
    root = write_class(tmp_path, names)
    status, stdout, stderr = kill_a_grading_worker(cluster, root,
                                                   {"FORCE_COLOR": "1", "COLUMNS": "200"})
    assert status == 0, stdout + stderr
    graded = json.loads(stdout)["submissions"]
    assert [Path(row["path"]).name for row in graded] == [
        *(f"{i}-{name}" for i, name in enumerate(names)), "9-empty"]
    for row, name in zip(graded, names, strict=False):
        assert (row["status"], row["score"]) == ("graded", expected(name)["score"]), row
    # The progress (on stderr, as on a terminal) followed the checks as the workers graded them.
    # The empty folder is the one failed row.
    assert re.search("[12] running, 1 failed", stderr) and f"{SLOW}: part1." in stderr, stderr


@pytest.mark.slow
def test_when_no_worker_is_left_the_rest_get_error_rows(tmp_path: Path) -> None:
    """The only worker dies and none comes back: once `grader.abandon-after` (Dask's
    configuration; 1 s here) has passed, each submission not graded gets an `error` row saying
    why, instead of the coach waiting for ever."""
    alone = Cluster(tmp_path / "c")
    try:
        alone.add_worker()
        root = write_class(tmp_path, (SLOW,))
        status, stdout, stderr = kill_a_grading_worker(
            alone, root, {"DASK_GRADER__ABANDON_AFTER": "1"})
    finally:
        alone.close()
    assert status == 1, stdout + stderr
    graded, empty = json.loads(stdout)["submissions"]
    assert (graded["status"], graded["notes"]) == ("error", [
        "the grader itself failed: no worker of the cluster that may grade this batch was left "
        "to grade it"])
    assert empty["status"] == "broken"


@pytest.mark.slow
def test_workers_that_may_not_grade_say_why(tmp_path: Path) -> None:
    """A worker whose installed grader differs from the coach's (here: one round's data file
    changed) takes no task, nor does one that cannot make a sandbox (no bubblewrap on its
    PATH) unless the coach passed --no-sandbox; the coach is told why, and exit 2 when no
    worker is left."""
    copy = tmp_path / "other"
    shutil.copytree(REPO / "grader", copy / "grader",
                    ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(REPO / "reference", copy / "reference")
    data = next((copy / "grader" / "rounds").rglob("*.toml"))
    data.write_text(data.read_text() + "\n# edited on this worker\n")
    (tmp_path / "bare").mkdir()
    other = Cluster(tmp_path / "c")
    try:
        other.add_worker(env={**SESSION_ENV, "PYTHONPATH": str(copy)})
        other.add_worker(env={**SESSION_ENV, "PATH": str(tmp_path / "bare")})
        root = write_class(tmp_path / "coach", ("honest_correct",))
        boxed = grade(root, "--cluster", other.address)
        unboxed = grade(root, "--cluster", other.address, "--no-sandbox")
    finally:
        other.close()
    for done in boxed, unboxed:  # as one line, however the terminal wrapped it
        done.stderr = " ".join(done.stderr.split())
    differs = "will not grade: its installed grader differs from the coach's"
    if not NO_SANDBOX:
        assert boxed.returncode == 2, boxed.stdout + boxed.stderr
        assert differs in boxed.stderr
        assert "no worker of the cluster at" in boxed.stderr
        assert "it cannot make a sandbox" in boxed.stderr and "--no-sandbox" in boxed.stderr
        assert "Traceback" not in boxed.stderr
    assert differs in unboxed.stderr
    assert [(row["status"], row["score"]) for row in rows(unboxed)] == [
        ("graded", expected("honest_correct")["score"]), ("broken", 0.0)]


def test_without_distributed_cluster_says_how_to_install_it(tmp_path: Path) -> None:
    blocker = tmp_path / "blocked" / "distributed"
    blocker.mkdir(parents=True)
    (blocker / "__init__.py").write_text('raise ImportError("distributed is not installed")\n')
    root = write_class(tmp_path, ("honest_correct",))
    done = grade(root, "--cluster", "tcp://127.0.0.1:9",
                 env={"PYTHONPATH": f"{blocker.parent}{os.pathsep}{REPO}"})
    assert done.returncode == 2, done.stdout + done.stderr
    assert 'pip install "' in done.stderr and "[cluster]" in done.stderr
    assert "Traceback" not in done.stderr


def test_a_class_with_nothing_to_grade_needs_no_cluster(tmp_path: Path) -> None:
    root = write_class(tmp_path, ())
    done = grade(root, "--cluster", "tcp://127.0.0.1:9")
    assert [(row["status"], row["score"]) for row in rows(done)] == [("broken", 0.0)]


@pytest.mark.parametrize(("address", "says"), [
    pytest.param("tcp://127.0.0.1:9", "cannot reach a Dask scheduler at tcp://127.0.0.1:9",
                 marks=pytest.mark.slow),  # waits out the 10 s connect timeout
    ("carrier-pigeon://loft", "'carrier-pigeon://loft' is not a Dask scheduler's address"),
    ("tcp://", "'tcp://' is not a Dask scheduler's address"),
])
def test_no_scheduler_there_is_a_clear_error(tmp_path: Path, address: str, says: str) -> None:
    root = write_class(tmp_path, ("honest_correct",))
    done = grade(root, "--cluster", address)
    assert done.returncode == 2, done.stdout + done.stderr
    assert says in done.stderr
    assert "Traceback" not in done.stderr


@pytest.mark.parametrize("where", ["--cluster", "settings"])
def test_jobs_on_a_cluster_is_a_usage_error(tmp_path: Path, where: str) -> None:
    """--jobs sets local processes; on a cluster it would be silently ignored."""
    root = write_class(tmp_path, ("honest_correct",))
    address = ["--cluster", "tcp://127.0.0.1:9"] if where == "--cluster" else []
    if where == "settings":
        with (root / "coach.toml").open("a") as settings:
            settings.write('\n[cluster]\naddress = "tcp://127.0.0.1:9"\n')
    done = grade(root, *address, "--jobs", "3")
    assert done.returncode == 2, done.stdout + done.stderr
    assert done.stderr.endswith("Error: --jobs sets how many grade here side by side; on the "
                                "cluster at tcp://127.0.0.1:9 its workers' threads do: drop "
                                "--jobs\n"), done.stderr


@pytest.mark.parametrize("message", [
    "part1.correctness passed", None, {}, {"request": "submission-0", "part": "part1"},
    {"request": "submission-0", "part": "part1", "check": ["part1.correctness"]},
    {"request": "submission-0", "part": "part1", "check": {"id": "x", "title": 7,
                                                           "status": "passed", "score": 1,
                                                           "max_score": 1}},
    {"request": "submission-0", "part": "part1", "check": {"id": "x", "stolen": True}},
])
def test_a_progress_report_that_is_not_one_is_ignored(message: object) -> None:
    """Any client of the scheduler may log to the batch's topic: what is not a check's report
    shows nothing, and never stops the coach."""
    from grader.coach.cluster import reported

    assert reported(message) is None


def test_a_progress_report_is_read_back_with_its_text_capped() -> None:
    from grader.coach.cluster import reported

    found = reported({"request": "submission-3", "part": "part1", "check": {
        "id": "part1.correctness", "title": "t", "status": "failed", "score": 0,
        "max_score": 5, "message": "\x1b[31m" + "x" * 100_000}})
    assert found is not None
    request, part, check_id, check = found
    assert (request, part, check_id, check.status) == (
        "submission-3", "part1", "part1.correctness", "failed")
    assert len(check.message) < 100_000 and check.message.endswith("not shown)")
