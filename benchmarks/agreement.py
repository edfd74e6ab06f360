"""Do verdicts depend on how busy the machine is? Grade the same submissions at several loads
and compare every verdict and score with the quiet run.

    python benchmarks/agreement.py [--loads 0 4 8 16 8memory 4io] [--cpus 0.5 0.25]
                                   [--memory 1200 700] [--stopped 2] [--runs 2] [--jobs 2]
                                   [--buggy 1]
                                   [--measured 4] [--niced 4]
                                   [--modes check sandbox grade]

The submissions: every round's references (in its first flavor) and, per round, `--buggy`
known-buggy solutions from tests/solutions (the first ones that are neither hostile nor correct
in an unusual way) and `--measured` solutions that pin the verdict of a check measured in rounds
(CPU-time growth, timing: the checks a busy machine could sway), each in a workspace of its
own. The load: that many busy processes, started by this script before a measurement and
killed after it, each spinning (`8`) or busy another way (`8bursts`, `8memory`, `8io`,
`8forks`, `20held`: spinning and resting at random, copying through arrays larger than the
caches, writing and flushing to the disk, forking and reaping, holding a GiB of memory;
tests/helpers.py's LOADS); or, with `--cpus`, a quota: every grader process started in a
cgroup whose processes together get that many CPUs' time, as in a container (Gradescope's, a
CI runner's; needs root and a writable cgroup cpu controller); or, with `--niced`, that many
spinning processes at this script's priority and every grader process at the lowest (nice 19),
as a coach running `nice grader grade` beside other work gets a few percent of a CPU; or, with
`--memory`, a limit:
every grader process started in a cgroup whose processes together may hold that many MiB, as
in a container with a memory limit, where the kernel reclaims the grading's own pages as it
nears the limit (needs root and a writable memory controller; a limit too small for the
grading ends the run with what the grader said); or, with `--stopped`, the grading's deepest
processes (a child running code, or the worker between children) stopped for that many seconds
at a time and continued for one, again and again (tests/helpers.py's `stopping`): kept from
running while the CPUs are free, as a frozen container or a debugger keeps them. The modes:

  check:    `grader check --no-sandbox --json`, one workspace after another;
  sandbox:  `grader check --json` (sandboxed, the default where bubblewrap works);
  grade:    one `grader grade --jobs N --json` over all of them (`--jobs`, 2 by default),
            each in its sandbox.

Every run uses the same seed. For each mode and load it prints the share of check verdicts
(status), of verdicts with the same hint too (a hint is no grade, but a candidate reads it as
the tool's word on the code) and of submission scores equal to the quiet run's (load 0, first
run), over all runs at that load, the machine's one-minute load average as each run ended (the
highest: other work on a shared machine shows there), and lists what differed. The target is
100% at every load.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import tomllib
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, ExitStack, contextmanager
from pathlib import Path
from typing import NamedTuple

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from grader.checks.table import measured_checks  # noqa: E402 - after the path is set
from grader.coach.selfcheck import write_exercises  # noqa: E402
from grader.engine.rounds import Round, installed  # noqa: E402

sys.path.insert(0, str(REPO / "tests"))
from helpers import LOADS, busy, cpu_quota, memory_cap, stopping  # noqa: E402

SEED = "424242"
SOLUTIONS = REPO / "tests" / "solutions"


class Outcome(NamedTuple):
    """One submission's grading: each check's status and hint, and the total score."""

    statuses: dict[str, str]
    hints: dict[str, str | None]
    score: float


Verdicts = dict[str, Outcome]
"""By submission."""


def buggy_solutions(round_: Round, count: int, measured: int) -> list[Path]:
    """The first `count` known-buggy solutions of the round that apply to its first flavor,
    then `measured` that pin a measured check's verdict, as many passing it as failing it."""
    found: list[Path] = []
    pinning: dict[bool, list[Path]] = {True: [], False: []}
    checks = measured_checks(round_, round_.flavors[0])
    for folder in sorted((SOLUTIONS / round_.id).iterdir()):
        expect = folder / "expect.toml"
        if not expect.is_file() or folder.name.startswith(("hostile", "seed")):
            continue
        data = tomllib.loads(expect.read_text())
        if round_.flavors[0] not in data.get("flavors", round_.flavors):
            continue
        pinned = [e for e in data.get("expect", []) if e["check"] in checks]
        if pinned:
            pinning[all(e.get("status") == "passed" for e in pinned)].append(folder)
        elif not data.get("full_marks"):
            found.append(folder)
    return found[:count] + pinning[True][:measured // 2] + pinning[False][:measured
                                                                          - measured // 2]


def make_submissions(folder: Path, buggy: int, measured: int) -> dict[str, tuple[str, Path]]:
    """(round id, workspace) by name: each round's references, and its buggy and measured
    solutions (buggy_solutions)."""
    made = {}
    for round_ in installed().values():
        flavor = round_.flavors[0]
        for solution in [None, *buggy_solutions(round_, buggy, measured)]:
            name = f"{round_.id}-{solution.name if solution else 'reference'}"
            root = write_exercises(folder / name, round_, flavor, "references")
            (root / "grader.toml").write_text(f'round = "{round_.id}"\nflavor = "{flavor}"\n')
            if solution:
                source = solution / flavor if (solution / flavor).is_dir() else solution
                for file in source.glob("*.py"):
                    shutil.copy(file, root / "exercises" / file.name)
            made[name] = (round_.id, root)
    return made


class Where(NamedTuple):
    """Where the grader's processes start: inside the cgroup whose procs file is `procs`, if
    one is given, at the priority `nice` lower than this script's."""

    procs: Path | None = None
    nice: int = 0


def joining(where: Where) -> Callable[[], None] | None:
    """What a child runs before exec to start where it should, if anywhere else."""
    if where == Where():
        return None

    def join() -> None:
        if where.procs is not None:
            where.procs.write_text(str(os.getpid()))
        os.nice(where.nice)

    return join


def grader(*args: str | Path, cwd: Path, where: Where) -> dict:
    """One grader command's JSON document (exit status 0 or 1 both mean it graded), from the
    checkout this script is in, whichever grader is installed; started `where`."""
    path = os.pathsep.join(p for p in (str(REPO), os.environ.get("PYTHONPATH")) if p)
    done = subprocess.run([sys.executable, "-m", "grader", *map(str, args)], cwd=cwd,
                          capture_output=True, text=True, preexec_fn=joining(where),
                          env={**os.environ, "COLUMNS": "200", "PYTHONPATH": path})
    try:
        if done.returncode in (0, 1):
            return json.loads(done.stdout)
    except json.JSONDecodeError:
        pass
    raise SystemExit(f"grader {' '.join(map(str, args))} failed in {cwd} (exit status "
                     f"{done.returncode}):\n{done.stderr[-2000:]}")


def verdicts_of(parts: list[dict]) -> Outcome:
    checks = [c for p in parts for c in p["checks"]]
    return Outcome({c["id"]: c["status"] for c in checks}, {c["id"]: c["hint"] for c in checks},
                   round(sum(p["score"] for p in parts), 4))


def measure(mode: str, submissions: dict[str, tuple[str, Path]], scratch: Path,
            where: Where, jobs: int) -> Verdicts:
    """Every submission's verdicts in one mode, the grader started `where`."""
    if mode != "grade":
        extra = ["--no-sandbox"] if mode == "check" else []
        return {name: verdicts_of(grader("check", "--json", "--seed", SEED, *extra,
                                         cwd=root, where=where)["parts"])
                for name, (_, root) in submissions.items()}
    batch = scratch / "batch"
    shutil.rmtree(batch, ignore_errors=True)
    for name, (round_id, root) in submissions.items():
        shutil.copytree(root, batch / round_id / name)
    found: Verdicts = {}
    for folder in sorted(batch.iterdir()):
        doc = grader("grade", folder, "--round", folder.name, "--jobs", str(jobs), "--json",
                     "--seed", SEED, cwd=scratch, where=where)
        for row in doc["submissions"]:
            found[Path(row["path"]).name] = verdicts_of(row["parts"])
    return found


class Agreement(NamedTuple):
    """How many of the quiet run's verdicts, hints and scores another run repeated."""

    verdicts: int
    hints: int
    checks: int
    scores: int
    submissions: int
    differed: list[str]

    @staticmethod
    def over(runs: list[Agreement]) -> Agreement:
        """The counts of several runs added up, each one's differences listed."""
        return Agreement(*(sum(run[field] for run in runs) for field in range(5)),
                         [line for run in runs for line in run.differed])


def compare(quiet: Verdicts, other: Verdicts) -> Agreement:
    """What another run repeated of the quiet one, and what it did not. A hint counts where
    its check's status was repeated too (a changed status changes its hint as well)."""
    verdicts = hints = checks = scores = 0
    differed = []
    for name, (statuses, quiet_hints, score) in quiet.items():
        theirs = other.get(name, Outcome({}, {}, -1.0))
        for check_id, status in statuses.items():
            checks += 1
            their_status = theirs.statuses.get(check_id, "missing")
            if their_status != status:
                differed.append(f"{name} {check_id}: {status} -> {their_status}")
                continue
            verdicts += 1
            if theirs.hints.get(check_id) == quiet_hints[check_id]:
                hints += 1
            else:
                differed.append(f"{name} {check_id} hint: {quiet_hints[check_id]!r} -> "
                                f"{theirs.hints.get(check_id)!r}")
        scores += score == theirs.score
    return Agreement(verdicts, hints, checks, scores, len(quiet), differed)


@contextmanager
def condition(label: str) -> Iterator[Where]:
    """The machine a measurement runs on, and where the grader starts in it: `N` or `N<kind>`
    busy processes beside it, `N niced` (as many spinning, the grader at nice 19), `Ncpu` of
    quota or `NMiB` of memory (in the cgroup whose procs file is yielded), or `Ns stopped`
    (every grader process this script starts, stopped N seconds of every N + 1)."""
    if label.endswith("s stopped"):
        with stopping(os.getpid(), float(label.removesuffix("s stopped"))):
            yield Where()
        return
    if label.endswith(" niced"):
        with busy(int(label.removesuffix(" niced")), "spin"):
            yield Where(nice=19)
        return
    limits: dict[str, tuple[str, str, Callable[[str], AbstractContextManager[Path]]]] = {
        "cpu": ("--cpus", "cpu", lambda n: cpu_quota(float(n))),
        "MiB": ("--memory", "memory", lambda n: memory_cap(int(n)))}
    unit = next((u for u in limits if label.endswith(u)), None)
    if unit is not None:
        option, controller, make = limits[unit]
        with ExitStack() as stack:
            try:
                procs = stack.enter_context(make(label.removesuffix(unit)))
            except OSError as exc:
                raise SystemExit(f"{option} needs a writable cgroup {controller} controller "
                                 f"(root): {exc}") from exc
            yield Where(procs)
    else:
        count, kind = load_of(label)
        with busy(count, kind) as loads:
            yield Where()
            if any(load.poll() is not None for load in loads):
                raise SystemExit(f"a busy process of {label} ended early: the load was not there")


def load_label(label: str) -> str:
    """The label itself, once load_of reads it (argparse's type for --loads)."""
    load_of(label)
    return label


def load_of(label: str) -> tuple[int, str]:
    """(count, kind) of a load label: `8` (spinning) or `8memory`."""
    digits = label[:len(label) - len(label.lstrip("0123456789"))]
    kind = label[len(digits):] or "spin"
    if not digits or kind not in LOADS:
        raise argparse.ArgumentTypeError(f"{label!r}: a count, then nothing or one of "
                                         f"{', '.join(LOADS)}")
    return int(digits), kind


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--loads", nargs="+", default=["0", "4", "8", "16"],
                        type=load_label)
    parser.add_argument("--cpus", type=float, nargs="*", default=[])
    parser.add_argument("--memory", type=int, nargs="*", default=[], metavar="MIB")
    parser.add_argument("--stopped", type=float, nargs="*", default=[], metavar="S")
    parser.add_argument("--niced", type=int, nargs="*", default=[], metavar="N")
    parser.add_argument("--runs", type=int, default=2)
    parser.add_argument("--jobs", type=int, default=2, help="grade's --jobs")
    parser.add_argument("--buggy", type=int, default=1)
    parser.add_argument("--measured", type=int, default=4)
    parser.add_argument("--modes", nargs="+", default=["check", "sandbox", "grade"],
                        choices=["check", "sandbox", "grade"])
    options = parser.parse_args()
    if any(not 0 < cpus <= (os.cpu_count() or 1) for cpus in options.cpus):
        parser.error("--cpus: each quota is more than 0 and at most the machine's cores")
    if any(mib < 64 for mib in options.memory):
        parser.error("--memory: each limit is at least 64 MiB")
    if any(seconds <= 0 for seconds in options.stopped):
        parser.error("--stopped: each stop lasts more than 0 s")
    if any(count < 1 for count in options.niced):
        parser.error("--niced: at least one spinning process beside the grader")
    labels = list(dict.fromkeys(["0", *options.loads])) + \
        [f"{cpus:g}cpu" for cpus in options.cpus] + [f"{mib}MiB" for mib in options.memory] + \
        [f"{seconds:g}s stopped" for seconds in options.stopped] + \
        [f"{count} niced" for count in options.niced]
    with tempfile.TemporaryDirectory() as scratch_name:
        scratch = Path(scratch_name)
        submissions = make_submissions(scratch / "ws", options.buggy, options.measured)
        print(f"{len(submissions)} submissions, {os.cpu_count()} cores, seed {SEED}",
              flush=True)
        print(f"{'mode':<8} {'load':>10} {'verdicts equal':>16} {'hints equal':>12} "
              f"{'scores equal':>13} {'wall s':>7} {'loadavg':>8}", flush=True)
        for mode in options.modes:
            quiet: Verdicts | None = None
            for label in labels:
                runs: list[Agreement] = []
                machine: list[float] = []
                began = time.monotonic()
                for _ in range(options.runs):
                    with condition(label) as where:
                        found = measure(mode, submissions, scratch, where, options.jobs)
                        machine.append(os.getloadavg()[0])
                    if quiet is None:
                        quiet = found
                    runs.append(compare(quiet, found))
                wall = (time.monotonic() - began) / options.runs
                agreed = Agreement.over(runs)
                print(f"{mode:<8} {label:>10} {agreed.verdicts / agreed.checks:>15.1%} "
                      f"{agreed.hints / agreed.checks:>12.1%} "
                      f"{agreed.scores:>6}/{agreed.submissions:<6} {wall:>7.1f} "
                      f"{max(machine):>8.1f}", flush=True)
                for line in sorted(set(agreed.differed)):
                    print(f"    differed: {line}", flush=True)


if __name__ == "__main__":
    main()
