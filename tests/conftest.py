"""Fixtures: one warm grading worker per test process, each solution graded once, and each
module's end-to-end jobs run once.

pytest-xdist spreads the tests over processes (`-n auto`, from pyproject.toml). Starting a
worker imports torch (a second or two); grading a part in it costs a fork, so the tests of one
process share one worker. What a test needs that others need too is made once per process and
kept: a solution folder graded (tests/solutions), the result of a module's `JOBS` (end-to-end
runs of the real command, see helpers.Job). `--dist loadgroup` keeps the tests of each round's
solutions, each module's that has jobs, and the hostile submissions' in one group, so that
nothing is made twice across processes (a worker keeps what a round's references and mutants
answered, see runner.worker._Answers: the first grading of a round pays for it).
"""

from __future__ import annotations

import itertools
import os
import signal
import sys
import time
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path

import pytest
from click.testing import CliRunner

# Ask NVML whether CUDA is there, so that no test process initialises CUDA before it forks.
os.environ.setdefault("PYTORCH_NVML_BASED_CUDA_CHECK", "1")
# The suite starts about 150 Python processes that import the grader (each command run, each
# worker, each sandbox's executor, and pytest-xdist's test processes, which rewrite every test
# module's asserts): with bytecode writing off (PYTHONDONTWRITEBYTECODE, set on some machines),
# each compiles it all again, a tenth of the quick tier's CPU time. With it on, the first to
# import a module writes its bytecode beside it (atomically) and the others read it.
os.environ.pop("PYTHONDONTWRITEBYTECODE", None)

from grader.checks.table import round_checks  # noqa: E402
from grader.engine.secret import SECRET_ENV

# An instructor's secret in the developer's environment would change every seed a test pins.
os.environ.pop(SECRET_ENV, None)
import grader.runner
from grader.engine.results import RunResult
from grader.engine.rounds import DEFAULT_ROUND
from grader.runner import Request, Worker, strays

from helpers import (
    TEST_SEED,
    TEST_TIMEOUT_S,
    Job,
    LentWorker,
    Solution,
    cpu_quota,
    measured_in,
    write_workspace,
)

RUN_MARK = "GRADER_TEST_RUN"
"""Set in the environment by the process that starts the run (pytest_configure), so that every
process the run starts carries it (its test processes too, started after), and the run can
find at its end what outlived it."""

# As for the processes the suite starts (above), for this one: pytest keeps each test module's
# rewritten asserts as bytecode beside it (the test modules are imported after this one), so a
# later run reads them instead of rewriting every module again.
sys.dont_write_bytecode = False


class Grading:
    """Grades workspaces through one long-lived worker, and keeps what was made once."""

    def __init__(self, tmp: pytest.TempPathFactory) -> None:
        self._tmp = tmp
        self._worker: Worker | None = None
        self._ids = itertools.count()
        self._graded: dict[tuple[str, str], RunResult] = {}
        self._jobs: dict[Job, object] = {}

    @property
    def worker(self) -> Worker:
        """Started on first use and never silently replaced: if candidate code ever took the
        worker down, every later test should say so."""
        if self._worker is None:
            self._worker = Worker()
        return self._worker

    def request(self, root: Path, flavor: str, parts: tuple[str, ...] | list[str], *,
                round_id: str = DEFAULT_ROUND, seed: int = TEST_SEED,
                timeout_s: float = TEST_TIMEOUT_S, memory_mb: int = 2048,
                device: str = "cpu", informational: bool = True,
                measured: bool = True) -> Request:
        """A request as the CLI would build it. The device defaults to the CPU so that every
        verdict pinned in tests/solutions holds on any machine; tests/test_gpu.py grades on
        CUDA where there is one."""
        return Request(id=f"test-{next(self._ids)}", root=str(root), round=round_id,
                       flavor=flavor, parts=list(parts), seed=seed, timeout_s=timeout_s,
                       memory_mb=memory_mb, device=device, informational=informational,
                       measured=measured)

    def run(self, root: Path, flavor: str, parts: tuple[str, ...] | list[str],
            **options: object) -> RunResult:
        """Grade through the shared worker."""
        return self.worker.run(self.request(root, flavor, parts, **options))  # type: ignore[arg-type]

    def solution(self, solution: Solution, flavor: str) -> RunResult:
        """A solution folder graded in one flavor, once per test process. Checks that cannot
        apply on this machine (GPU timing) are not run unless the folder pins one in this
        flavor: their CPU figures are information. Nor are checks measured in timed rounds,
        unless the folder needs them (helpers.measured_in)."""
        key = (solution.key, flavor)
        if key not in self._graded:
            self._graded[key] = self.grade_solution(solution, flavor)
        return self._graded[key]

    def grade_solution(self, solution: Solution, flavor: str) -> RunResult:
        """A solution folder graded afresh, in a workspace of its own (see `solution`)."""
        root = write_workspace(self._tmp.mktemp(f"{solution.name}-{flavor}"), flavor,
                               solution.start, solution.files(flavor), solution.round)
        machine_bound = {c.id for c in round_checks(solution.round) if c.needs}
        pinned = {e.check for e in solution.expect if flavor in e.flavors}
        return self.run(root, flavor, solution.parts, round_id=solution.round.id,
                        timeout_s=solution.timeout_s, memory_mb=solution.memory_mb,
                        informational=bool(pinned & machine_bound),
                        measured=bool(measured_in(solution, flavor)))

    def once(self, job: Job) -> object:
        """The job's result, run on first use in this test process (what it raised, raised
        again to each test that wants it)."""
        if job not in self._jobs:
            try:
                self._jobs[job] = job(self._tmp)
            except Exception as exc:  # noqa: BLE001 - every test that wants it sees it
                self._jobs[job] = exc
        done = self._jobs[job]
        if isinstance(done, Exception):
            raise done
        return done

    def close(self) -> None:
        if self._worker is not None:
            self._worker.close()


@pytest.fixture(scope="session")
def grading(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Grading]:
    session = Grading(tmp_path_factory)
    yield session
    session.close()


@pytest.fixture
def own_grading(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Grading]:
    """Gradings through a worker of this test's own, for a test that may take its worker down:
    the session's is never silently replaced."""
    own = Grading(tmp_path_factory)
    yield own
    own.close()


CONTAINER_CPUS = 0.5


@pytest.fixture(scope="module")
def container(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Grading, Path]]:
    """Gradings through a worker of their own in a cgroup whose processes together get
    CONTAINER_CPUS of CPU time (the worker and every process it forks or sandboxes), as in a
    container with a CPU limit, and the cgroup's folder; skipped where no such cgroup can be
    made (not root). The cgroup comes first on the machine (cpu_quota's `first`), so its quota
    holds the grading back however busy the machine is."""
    with ExitStack() as stack:
        try:
            procs = stack.enter_context(cpu_quota(CONTAINER_CPUS, first=True))
        except OSError as exc:
            pytest.skip(f"no cgroup with a CPU quota can be made here ({exc})")
        limited = Grading(tmp_path_factory)
        stack.callback(limited.close)
        procs.write_text(str(limited.worker.process.pid))
        yield limited, procs.parent


def pytest_configure(config: pytest.Config) -> None:
    """The run's mark (RUN_MARK), set where the run starts: a run started from a test
    process gets one of its own. Then the tier: the quick one by default (pyproject.toml's
    `-m 'not slow'`), but a test named on the command line runs whatever its tier (`python -m
    pytest tests/test_wheel.py`), unless the command says `-m` itself: naming a slow test and
    getting "deselected" helps nobody."""
    if not hasattr(config, "workerinput"):
        os.environ[RUN_MARK] = f"{os.getpid()}.{time.time_ns()}"
    where = config.invocation_params.dir
    named = [a for a in config.args if (where / a.split("::")[0]).resolve() != TESTS]
    asked = any(a.startswith("-m") for a in config.invocation_params.args)
    if named and not asked:
        config.option.markexpr = ""


TESTS = Path(__file__).resolve().parent


@pytest.hookimpl(optionalhook=True)  # xdist's: a run without it (-p no:xdist) knows none
def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """`-n auto`: one test process more than the CPUs this run may use. Many tests wait (on a
    timeout, a sleeping child, a sandbox starting) while using no CPU; a process more keeps the
    CPUs busy meanwhile (2 CPUs here: 135 s with three processes against 149 s with two)."""
    return len(os.sched_getaffinity(0)) + 1
OUTLIVED_WAIT_S = 5.0
"""How long the run's end waits for processes that are ending (a killed child being reaped)
before it counts them as left behind."""


@pytest.hookimpl(trylast=True)  # after the session's fixtures are torn down
def pytest_sessionfinish(session: pytest.Session) -> None:
    """No test may leave a process running: one that does (an orphan handed to init, a
    spinner never stopped) takes CPU from every test after it, and from the next run. At the
    end of the run (in the process that started it), every process still carrying this run's
    mark is killed and the run fails, naming each. The mark is in the environment a process
    was started with: a run without test processes (-p no:xdist) sets it after its own start,
    so what that process forks without exec is not found; the default run's test processes
    start with it, and all they fork carry it."""
    if hasattr(session.config, "workerinput"):
        return
    deadline = time.monotonic() + OUTLIVED_WAIT_S
    while (left := _outliving()) and time.monotonic() < deadline:
        time.sleep(0.1)
    for pid in left:
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
    if left:
        said = "\n".join(f"  {pid}: {what}" for pid, what in left.items())
        session.config.get_terminal_writer().line(
            f"{len(left)} process(es) outlived the tests that started them (killed now):\n"
            f"{said}", red=True)
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def _outliving() -> dict[int, str]:
    """The live processes that carry this run's mark, each with its command line and the test
    that started it, where its environment says; not this process, nor its own children: in a
    run without test processes (-p no:xdist) this one ran the tests, and a worker it started
    ends with it (its stdin closes), as a test process's do with that process."""
    mark = f"{RUN_MARK}={os.environ[RUN_MARK]}".encode()
    spared = {os.getpid(), *strays.children()}
    found: dict[int, str] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) in spared:
            continue
        try:
            environ = (entry / "environ").read_bytes().split(b"\0")  # a zombie's is empty
            if mark not in environ:
                continue
            command = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        test = [v for v in environ if v.startswith(b"PYTEST_CURRENT_TEST=")]
        found[int(entry.name)] = command.strip()[:200] + (
            f" (from {test[0].split(b'=', 1)[1].decode(errors='replace')})" if test else "")
    return found


@pytest.hookimpl(tryfirst=True)  # before xdist reads the groups
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Group the tests that share what is made once (see the module's docstring), the modules
    with end-to-end jobs first (a batch that waits on sandboxes and timeouts then overlaps the
    rest instead of running last), the rounds' known solutions next (the largest groups: the
    many small tests after them even out what each process was given)."""
    for item in items:
        group = _group(item)
        if group is not None:
            item.add_marker(pytest.mark.xdist_group(group))
    items.sort(key=lambda item: (not getattr(getattr(item, "module", None), "JOBS", ()),
                                 item.path.name != "test_solutions.py"))


def _group(item: pytest.Item) -> str | None:
    if getattr(getattr(item, "module", None), "JOBS", ()):
        return item.path.name
    if item.path.name == "test_hostile.py":
        return "hostile"
    callspec = getattr(item, "callspec", None)
    solution = callspec.params.get("solution") if callspec else None
    if isinstance(solution, Solution):
        return "hostile" if solution.name.startswith("hostile_") else solution.round.id
    return None


@pytest.fixture
def runner(grading: Grading, monkeypatch: pytest.MonkeyPatch) -> CliRunner:
    """A CliRunner whose `grader check` grades in the session's worker, a plain one whatever
    sandbox the command asks for (a module may lend another worker under the same name; the
    sandboxed path is run for real by the tests that start the command as a process)."""
    monkeypatch.setattr(grader.runner, "Worker", lambda **_: LentWorker(grading.worker))
    return CliRunner(env={"COLUMNS": "120"})
