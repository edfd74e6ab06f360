"""A verdict is a fact about the submission, not about the machine: graded again beside busy loops
that this module starts itself (twice as many as the machine has cores, at the grader's own
priority, each spinning and resting in random bursts, so that the load changes from one timed
run to the next), known solutions get every check's status and score they get without them.

The solutions are those whose verdicts a busy machine could sway: each pins the outcome of a check
measured in rounds (CPU-time growth, the `by_hand` cost checks), right in an unusual way or wrong
by an order of work, in every round that has such checks. The same again in a container's CPU
quota (a cgroup whose processes share part of one CPU), and with the grading's processes
stopped and continued again and again (kept from running on an idle machine).
`benchmarks/agreement.py` asks the same at several loads, over more submissions and through
the CLI; this keeps the property in CI.
"""

from __future__ import annotations

import json
import os
from contextlib import ExitStack
from pathlib import Path

import pytest

from grader.engine.results import SHORT_OF_MEMORY, RunResult

from helpers import (
    NO_SANDBOX,
    Solution,
    busy,
    measured_in,
    memory_cap,
    run_grader,
    stopping,
    write_part1_that_first_runs,
    write_workspace,
)
from helpers import solution as known_solution

AGREEING = [
    ("prefix-products", "part3_einsum", "torch"),             # right, one product per einsum
    ("prefix-products", "part3_closed_form_hidden", "numpy"),  # O(N^2 D^3), its work hidden
    ("prefix-products", "part3_two_sweeps", "torch"),         # right, twice the work
    ("prefix-products", "part4_python_loop_scan", "numpy"),   # right, the scan's levels in Python
    ("matmul-grad", "part1_row_loop", "numpy"),                # right, a Python loop over rows
    ("matmul-grad", "part1_finite_differences", "torch"),      # a forward per entry
    ("normalization", "part2_finite_differences", "numpy"),
    ("mlp-backprop", "part3_finite_differences", "numpy"),
]


def case(round_id: str, name: str, flavor: str) -> object:
    found = known_solution(name, round_id)
    assert measured_in(found, flavor), f"{found.key} pins no check measured in rounds"
    return pytest.param(found, flavor, id=f"{found.key}[{flavor}]")


def outcomes(result: RunResult) -> dict[str, tuple[str, float]]:
    return {c.id: (c.status, c.score) for part in result.parts for c in part.checks}


@pytest.mark.slow
@pytest.mark.parametrize(("solution", "flavor"), [case(*entry) for entry in AGREEING])
def test_a_busy_machine_gives_every_check_its_quiet_verdict(grading, solution: Solution,
                                                           flavor: str) -> None:
    """The quiet grading is the one the known solutions' own test uses (graded once per test
    process, in the same group of tests); the busy one is made afresh."""
    quiet = grading.solution(solution, flavor)
    with busy(2 * (os.cpu_count() or 1), "bursts") as spinners:
        loaded = grading.grade_solution(solution, flavor)
        alive = [spinner.poll() is None for spinner in spinners]
    assert all(alive), "a busy loop ended before the grading did: the machine was not busy"
    assert outcomes(loaded) == outcomes(quiet)
    pinned = {e.check: e.status for e in solution.expect if flavor in e.flavors}
    assert {check: outcomes(loaded)[check][0] for check in pinned} == pinned


@pytest.mark.slow
@pytest.mark.parametrize(("solution", "flavor"), [case(*entry) for entry in AGREEING])
def test_a_container_with_part_of_a_cpu_gives_every_check_its_quiet_verdict(
        grading, container, solution: Solution, flavor: str) -> None:
    """A CPU quota (conftest's `container`) starves every process of the grading at once, in
    bursts of its period: the candidate's child and the reference's alike, the worker that
    waits on them too."""
    limited, group = container
    quiet = grading.solution(solution, flavor)
    assert outcomes(limited.grade_solution(solution, flavor)) == outcomes(quiet)
    assert throttled(group) > 0, "the quota never held the grading back: nothing was tested"


STOPPED = [
    ("mlp-backprop", "part3_finite_differences", "numpy"),  # stopped at the cap in each round
    ("prefix-products", "part3_closed_form_hidden", "numpy"),  # the same, its work hidden
    ("prefix-products", "part3_two_sweeps", "torch"),       # right: passes
]


@pytest.mark.slow
@pytest.mark.parametrize(("solution", "flavor"), [case(*entry) for entry in STOPPED])
def test_processes_kept_from_running_give_every_check_its_quiet_verdict(
        grading, own_grading, solution: Solution, flavor: str) -> None:
    """The grading's processes stopped from outside (helpers.stopping), each as it appears,
    for half a second (two looks): the worker's children, and the worker between them, are
    kept from running while the machine is idle, longer than a capped run's CPU left before
    its cap. The grading continues them at its next look; neither the cap, the check's limits
    nor the command's watchdog take the stop for the code's doing."""
    quiet = grading.solution(solution, flavor)
    with stopping(own_grading.worker.process.pid, stopped_s=0.5, running_s=0.1) as stopped:
        held = own_grading.grade_solution(solution, flavor)
    assert len(stopped) > 1, "only the worker was ever stopped: nothing was tested"
    assert outcomes(held) == outcomes(quiet)


def throttled(group: Path) -> int:
    """How many periods of the cgroup's quota ended with its processes held back."""
    stat = dict(line.split() for line in (group / "cpu.stat").read_text().splitlines())
    return int(stat["nr_throttled"])


WORKER_STARVED_OF_MEMORY_MIB = 150
"""Less than a grading worker holds once torch is imported: the kernel's out-of-memory killer
ends it in every run, sandboxed or not."""


@pytest.mark.slow
@pytest.mark.parametrize("sandbox", ["--sandbox", "--no-sandbox"])
def test_a_worker_the_kernel_ends_for_memory_is_the_machines_failure(tmp_path: Path,
                                                                     sandbox: str) -> None:
    """A container too small for the grading: the command says the machine ran out of memory
    and what its limit is, exits 1 with nothing graded, and reports no grader bug."""
    if sandbox == "--sandbox" and NO_SANDBOX:
        pytest.skip(NO_SANDBOX)
    root = write_workspace(tmp_path / "ws", "torch")
    with ExitStack() as stack:
        try:
            procs = stack.enter_context(memory_cap(WORKER_STARVED_OF_MEMORY_MIB))
        except OSError as exc:
            pytest.skip(f"needs a memory cgroup of its own (root, a memory controller): {exc}")
        done = run_grader("check", "part1", sandbox, cwd=root,
                          preexec_fn=lambda: procs.write_text(str(os.getpid())))
    assert done.returncode == 1
    assert done.stdout == ""
    assert done.stderr == (
        "Error: the machine ran out of memory: the kernel's out-of-memory killer ended the "
        f"grading worker (its memory limit is {WORKER_STARVED_OF_MEMORY_MIB} MiB), and nothing "
        "it did was kept. Free some memory (close programs, raise the container's memory "
        "limit, or grade fewer submissions at once with --jobs) and run it again.\n")


CALL_BEYOND_ITS_CONTAINER_MIB = 1024
"""What each call of a part 1 below takes: within the 2 GiB the grader allows a process, far
beyond what the container below leaves once the grader's own processes are in it."""


@pytest.mark.slow
@pytest.mark.parametrize("sandbox", ["--sandbox", "--no-sandbox"])
def test_code_ended_for_memory_is_said_to_be_so(tmp_path: Path, sandbox: str) -> None:
    """A part whose every call fills 1 GiB (within what the grader lets it hold), in a 600 MiB
    container: the kernel's out-of-memory killer ends the process running it (the largest
    there, by far), and the memory that ran out was the container's, not the code's: every
    check it ended is undecided and says so (SHORT_OF_MEMORY), sandboxed as plainly, never
    failed nor put down to the code stopping or killing the process that runs it; where the
    killer picked the worker instead, the command says the machine ran out of memory."""
    if sandbox == "--sandbox" and NO_SANDBOX:
        pytest.skip(NO_SANDBOX)
    root = write_part1_that_first_runs(tmp_path / "ws",
                                       f"b'1' * ({CALL_BEYOND_ITS_CONTAINER_MIB} << 20)")
    with ExitStack() as stack:
        try:
            procs = stack.enter_context(memory_cap(600))
        except OSError as exc:
            pytest.skip(f"needs a memory cgroup of its own (root, a memory controller): {exc}")
        done = run_grader("check", "part1", "--json", sandbox, cwd=root,
                          preexec_fn=lambda: procs.write_text(str(os.getpid())))
    assert done.returncode == 1
    if not done.stdout:
        assert done.stderr.startswith("Error: the machine ran out of memory: the kernel's "
                                      "out-of-memory killer ended the grading worker")
        return
    ended = [check for part in json.loads(done.stdout)["parts"] for check in part["checks"]
             if check["status"] != "passed"]
    assert ended and {check["status"] for check in ended} == {"undecided"}
    assert all(check["message"].startswith(SHORT_OF_MEMORY) or
               f"not run: {SHORT_OF_MEMORY}" in check["message"] for check in ended)
    assert any("out-of-memory killer" in check["message"] for check in ended)


@pytest.mark.slow
def test_grade_holds_the_points_of_a_submission_whose_worker_the_kernel_ended(
        tmp_path: Path) -> None:
    """In `grade`, the row of a submission whose worker the kernel ended for memory says so,
    and its checks are undecided (held, to be graded again), not errors worth nothing."""
    write_workspace(tmp_path / "class" / "ann", "torch")
    with ExitStack() as stack:
        try:
            procs = stack.enter_context(memory_cap(WORKER_STARVED_OF_MEMORY_MIB))
        except OSError as exc:
            pytest.skip(f"needs a memory cgroup of its own (root, a memory controller): {exc}")
        done = run_grader("grade", tmp_path / "class", "--round", "prefix-products", "--json",
                          cwd=tmp_path, preexec_fn=lambda: procs.write_text(str(os.getpid())))
    [row] = json.loads(done.stdout)["submissions"]
    assert row["status"] == "error"
    assert row["notes"] == [
        "the machine ran out of memory: the kernel's out-of-memory killer ended the grading "
        f"worker (its memory limit is {WORKER_STARVED_OF_MEMORY_MIB} MiB), and nothing it did "
        "was kept. Free some memory (close programs, raise the container's memory limit, or "
        "grade fewer submissions at once with --jobs) and run it again."]
    assert {c["status"] for p in row["parts"] for c in p["checks"]} == {"undecided"}
