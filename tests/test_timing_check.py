"""part4.timing: graded on CUDA, skipped (with figures) elsewhere. The CUDA verdicts are
tested here on the CPU by judging observations shaped like the children's (the candidate's
scan, and the reference timed in a child of its own)."""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

import pytest

from grader.checks.base import Check, Context
from grader.checks.kinds import KINDS, Spec
from grader.checks.table import CHECK_KEYS, load_module
from grader.runner import Request
from grader.runner.children import fork_spawner
from grader.runner.worker import _Part, run_part

from helpers import PREFIX, solution, write_workspace

CHECKS = load_module(PREFIX, "checks")
PROBES = load_module(PREFIX, "probes")
ROW = next(c for c in tomllib.loads((PREFIX.folder / "checks.toml").read_text())["check"]
           if c["id"] == "part4.timing")
PARAMS = {k: v for k, v in ROW.items() if k not in CHECK_KEYS | {"plan"}}


def judge_timing(both: dict[str, Any], device: str | None = None, rounds: int = 2) -> Any:
    """The verdict after `rounds` rounds that timed alike (a quiet machine), with the judge's
    own finding of the device (by default, where the observation says it ran)."""
    return CHECKS.timing_judge(PARAMS, 6.0, device or both["yours"]["device"])(
        in_rounds([both] * rounds))


def in_rounds(observations: list[dict[str, Any]]) -> dict[str, Any]:
    """Observations, one per round, as the runner hands a measured plan's judge."""
    baseline = None if observations[0]["baseline"] is None else [
        [{"data": o["baseline"], "cpu_s": 0.5}] for o in observations]
    return {"yours": [[{"data": o["yours"], "cpu_s": 0.5}] for o in observations],
            "baseline": baseline, "baseline_error": observations[0]["baseline_error"]}


def stats(ms: float) -> dict[str, float]:
    seconds = ms / 1e3
    return {"median": seconds, "q1": seconds * 0.98, "q3": seconds * 1.02, "min": seconds * 0.9,
            "max": seconds * 1.2, "repeats": 20, "outliers": 0}


def observation(device: str, scan_ms: float, raised: dict[str, Any] | None = None) -> dict:
    """(the candidate's child's report, the reference child's), as the judge receives them."""
    common = {"device": device, "why_not_cuda": None if device == "cuda" else "no CUDA device",
              "n": 4096, "d": 32, "device_name": "NVIDIA H200" if device == "cuda" else "CPU",
              "untimed": []}
    yours = {**common, "raised": raised, "sequential_note": None,
             "returned": {"P": f"{device}:0" if device == "cuda" else "cpu", "dW": device},
             "figures": {"your scan forward": stats(scan_ms),
                         "your scan backward": stats(2 * scan_ms),
                         "your sequential forward": stats(40.0)}}
    baseline = {**common, "raised": None,
                "figures": {"reference scan forward": stats(1.0),
                            "reference scan backward": stats(2.0),
                            "reference sequential forward": stats(30.0)}}
    return {"yours": yours, "baseline": baseline, "baseline_error": ""}


def test_cuda_within_three_times_the_reference_passes_with_figures() -> None:
    verdict = judge_timing(observation("cuda", 2.5))
    assert verdict.status == "passed"
    assert ("2.50x the reference scan's time (limit 3x; the median of 2 rounds: 2.50x, 2.50x)"
            in verdict.message)
    assert "NVIDIA H200 (cuda), N=4096, D=32, float32" in verdict.message
    assert "scan speedup over sequential forward: 16.00x" in verdict.message
    assert "GFLOP/s" in verdict.message


@pytest.mark.parametrize("claim", ["no CUDA device", "--device cpu",
                                   "CUDA unusable in the grading process (forged)"])
def test_a_child_that_says_there_is_no_cuda_where_the_judge_found_some_keeps_the_points(
        claim: str) -> None:
    """Whether CUDA exists is the judge's fact: a slow scan cannot declare the check not
    applicable and move its points to the part's other checks."""
    both = observation("cpu", 40.0)
    both["yours"]["why_not_cuda"] = claim
    verdict = judge_timing(both, device="cuda")
    assert verdict.status == "skipped" and not verdict.not_applicable
    assert f"this machine has CUDA, but your scan's process reported {claim}" in verdict.message


@pytest.mark.parametrize(("scans_ms", "status"), [
    ((2.5,), "undecided"),                  # one round decides nothing
    ((2.5, 4.0), "undecided"),              # two that disagree, spread like a busy machine's
    ((2.5, 4.0, 2.6), "undecided"),         # the median moves to 2.6x: not yet settled
    ((2.5, 4.0, 2.6, 2.4), "undecided"),    # the median over two rounds was over it
    ((2.5, 4.0, 2.6, 2.4, 2.5), "passed"),  # three medians in a row under the limit
    ((4.0, 2.5, 4.2, 4.4, 4.3), "failed"),  # a busy first round does not save a slow scan
    ((4.0, 2.5, 3.6, 3.8), "undecided"),    # busy, and the medians not past the limit by the
                                            # spread a quiet machine allows: no verdict yet
    ((2.9, 3.2), "undecided"),              # near the limit, the rounds must agree
    ((2.9, 3.1), "passed"),                 # a quiet machine: the median stays under
    ((3.2, 3.4), "failed"),
])
def test_a_time_is_judged_on_the_median_of_rounds_once_it_stays_on_one_side(
        scans_ms: tuple[float, ...], status: str) -> None:
    """Each round times the reference in its own process and then the candidate's scan, so
    both see the same machine; the ratio's median over the rounds must stay on one side of the
    limit for two rounds in a row (three when the ratios spread like a busy machine's, and
    then past it by that machine's allowed spread to fail)."""
    verdict = CHECKS.timing_judge(PARAMS, 6.0, "cuda")(
        in_rounds([observation("cuda", ms) for ms in scans_ms]))
    assert verdict.status == status, verdict.message


def test_without_cuda_by_the_judges_finding_the_cpu_figures_are_for_information() -> None:
    verdict = judge_timing(observation("cpu", 40.0), device="cpu")
    assert verdict.status == "skipped" and verdict.not_applicable


def test_cuda_slower_than_three_times_fails_with_a_batching_hint() -> None:
    verdict = judge_timing(observation("cuda", 4.0))
    assert verdict.status == "failed"
    assert "4.00x the reference" in verdict.message
    assert verdict.hint and "one call" in verdict.hint


def test_cuda_run_that_was_too_slow_to_time_fails() -> None:
    raised = {"type": "TooSlow", "message": "one call took 3.10 s", "where": "", "bases": []}
    verdict = judge_timing(observation("cuda", 1.0, raised))
    assert verdict.status == "failed"
    assert "could not time your scan: TooSlow: one call took 3.10 s" in verdict.message
    assert verdict.hint and "Python loop over i" in verdict.hint


def test_a_scan_that_mixes_devices_on_cuda_fails_with_a_device_hint() -> None:
    raised = {"type": "RuntimeError", "where": "", "bases": [], "message": "Expected all "
              "tensors to be on the same device, but found at least two devices, cuda:0 and cpu!"}
    verdict = judge_timing(observation("cuda", 1.0, raised))
    assert verdict.status == "failed"
    assert verdict.hint and "device=W.device" in verdict.hint
    other = dict(raised, type="IndexError", message="index 4096 is out of bounds")
    hint = judge_timing(observation("cuda", 1.0, other)).hint
    assert hint and "N=4096" in hint


def test_cuda_scan_too_slow_for_the_timing_budget_fails_and_says_what_went_untimed() -> None:
    obs = observation("cuda", 1.0)
    for name in ("your scan backward", "your sequential forward"):
        del obs["yours"]["figures"][name]
    obs["yours"]["untimed"] = ["your scan backward", "your sequential forward"]
    verdict = judge_timing(obs)
    assert verdict.status == "failed"
    assert verdict.message.startswith("your scan was too slow to time within the 6 s timing "
                                      "budget")
    assert ("not timed (the 6 s timing budget ran out): your scan backward, your "
            "sequential forward") in verdict.message
    assert verdict.hint and "one call" in verdict.hint


def test_results_returned_on_the_cpu_for_cuda_inputs_fail_with_a_device_hint() -> None:
    obs = observation("cuda", 1.0)
    obs["yours"]["returned"] = {"P": "cpu", "dW": "cuda:0"}
    verdict = judge_timing(obs)
    assert verdict.status == "failed"
    assert verdict.message.startswith("your scan returned P on cpu for inputs on cuda: part of "
                                      "it ran elsewhere")
    assert verdict.hint and "device=W.device" in verdict.hint


def test_figures_are_listed_yours_first_in_a_fixed_order() -> None:
    obs = observation("cuda", 2.0)
    for side in ("yours", "baseline"):
        obs[side]["figures"] = dict(reversed(list(obs[side]["figures"].items())))
    lines = judge_timing(obs).message.splitlines()
    names = [line.split("  ")[1].strip() for line in lines if " ms " in line]
    assert names == ["your scan forward", "your scan backward", "reference scan forward",
                     "reference scan backward", "reference sequential forward",
                     "your sequential forward"]


def test_without_cuda_the_check_is_skipped_never_passed() -> None:
    verdict = judge_timing(observation("cpu", 1.0))
    assert verdict.status == "skipped"
    assert verdict.message.startswith("no CUDA device: CPU figures for information")
    assert "your scan forward" in verdict.message
    slow = judge_timing(observation("cpu", 100.0))
    assert slow.status == "skipped"


def test_a_reference_that_could_not_be_timed_fails_with_the_reason() -> None:
    verdict = judge_timing({"yours": observation("cuda", 1.0)["yours"], "baseline": None,
                            "baseline_error": "the reference did not finish in time"})
    assert verdict.status == "failed"
    assert "the reference did not finish in time" in verdict.message


def test_device_resolution(monkeypatch: pytest.MonkeyPatch) -> None:
    import torch

    resolve_device = PROBES.resolve_device
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "init", lambda: None)
    assert resolve_device("auto", "torch") == ("cuda", None)
    assert resolve_device("cpu", "torch") == ("cpu", "--device cpu")
    assert resolve_device("auto", "numpy") == ("cpu", "the numpy flavor runs on the CPU")

    def poisoned() -> None:
        raise RuntimeError("Cannot re-initialize CUDA in forked subprocess")

    monkeypatch.setattr(torch.cuda, "init", poisoned)
    device, why = resolve_device("auto", "torch")
    assert device == "cpu" and why and "re-initialize CUDA" in why
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    assert resolve_device("cuda", "torch") == ("cpu", "--device cuda, but no CUDA device here")
    assert resolve_device("auto", "torch") == ("cpu", "no CUDA device")
    assert PARAMS["sizes"]["cuda"] == [4096, 32]


QUICK = {"sizes": {"cuda": [128, 16], "cpu": [128, 16]},
         "repeat_s": {"cuda": 0.02, "cpu": 0.02}}
"""Small inputs and short repeats: these tests are about the path, not the figures."""


def timing_check(**overrides: Any) -> Check:
    """part4.timing built from its row of checks.toml, with some parameters changed (by default
    the QUICK ones)."""
    spec = Spec({**PARAMS, "plan": ROW["plan"], **QUICK, **overrides}, "test", PREFIX, CHECKS,
                PROBES, lambda names, where: ())
    return Check(ROW["id"], ROW["title"], ROW["points"], KINDS["custom"](spec),
                 ("torch", "numpy"), needs="cuda")


def run_timing(root: Path, check: Check, cuda: bool, earlier: tuple[str, ...] = ()) -> Any:
    request = Request(id="t", root=str(root), round=PREFIX.id, flavor="torch",
                      parts=["part4"], seed=5, timeout_s=20.0)
    ctx = Context(5, "torch", check.id, timeout_s=20.0, cuda=cuda, graded_parts=earlier,
                  passed_parts=earlier)
    part = _Part(request, PREFIX, PREFIX.part("part4"), [check], [ctx], [check.plan(ctx)],
                 fork_spawner(PREFIX))
    (timing,) = run_part(part)
    return timing


def test_the_reference_scan_on_this_cpu_reports_figures_and_skips(tmp_path: Path) -> None:
    import torch

    if torch.cuda.is_available():
        pytest.skip("covers the path without CUDA")
    root = write_workspace(tmp_path / "ws", "torch")
    timing = run_timing(root, timing_check(), cuda=False, earlier=("part2",))
    assert timing.status == "skipped"
    assert timing.score == 0 and timing.max_score == 0
    assert timing.message.startswith("no CUDA device: CPU figures for information")
    for figure in ("your scan forward", "your scan backward", "reference scan forward",
                   "your sequential forward", "scan speedup over sequential forward"):
        assert figure in timing.message


def test_without_a_passing_part2_only_the_reference_sequential_forward_is_timed(
        tmp_path: Path) -> None:
    """A broken Part 2 (here: never graded in this run) costs Part 4 nothing."""
    case = solution("hostile_segfault")
    root = write_workspace(tmp_path / "ws", "torch", files=case.files("torch"))
    timing = run_timing(root, timing_check(), cuda=False)
    assert timing.status == "skipped"
    assert "your sequential forward" not in timing.message
    assert "reference sequential forward" in timing.message
    assert "your Part 2 was not graded in this run" in timing.message


@pytest.mark.parametrize(("solution_name", "status"), [
    (None, "passed"), ("part4_python_loop_scan", "failed"),
    # Each timed call gets the matrices in an order of its own: nothing kept answers it.
    ("hostile_scan_memoised_by_identity", "failed"),
    # Each timed call's answer is held to the reference's same call.
    ("hostile_scan_zeros_when_timed", "failed")])
def test_the_graded_path_runs_end_to_end_on_this_cpu(monkeypatch: pytest.MonkeyPatch,
                                                      tmp_path: Path, solution_name: str | None,
                                                      status: str) -> None:
    """Everything CUDA grading does but CUDA itself: the children are told the CPU counts and
    the check is planned as on a GPU machine (at the CPU's size), so the real probes (device
    set-up, budget, device of the results, every figure) and the verdict run in real forked
    children."""
    monkeypatch.setattr(PROBES, "resolve_device", lambda requested, flavor: ("cpu", None))
    files = solution(solution_name).files("torch") if solution_name else None
    root = write_workspace(tmp_path / "ws", "torch", files=files)
    timing = run_timing(root, timing_check(sizes={"cuda": [512, 8], "cpu": [512, 8]}), cuda=True)
    assert timing.status == status, timing.message
    assert timing.max_score > 0
    assert "CPU (cpu), N=512, D=8, float32" in timing.message
    if solution_name == "hostile_scan_zeros_when_timed":
        assert timing.message.startswith("call 1 of your scan forward answered otherwise than "
                                         "the reference's on the same inputs")
        return
    assert "your scan takes" in timing.message and "x the reference scan's time" in timing.message
    if status == "failed":
        assert timing.hint and "one call" in timing.hint


def test_a_timed_call_that_answers_otherwise_fails_on_cuda_and_is_said_on_a_cpu() -> None:
    """A time is only the cost of work that gave the right answer: each timed call's answer
    (its projection) against the reference's same call, on the same inputs."""
    both = observation("cuda", 1.0)
    both["yours"]["answers"] = {"your scan forward": [[1.0, 2.0], [1.0, 2.0]],
                                "your scan backward": [[4.0, 9.0], [5.0, 9.0]]}
    both["baseline"]["answers"] = {"reference scan forward": [[1.0, 2.0], [1.0, 2.0]],
                                   "reference scan backward": [[4.0, 9.0], [4.0, 9.0], [6.0, 9.0]]}
    verdict = judge_timing(both)
    assert verdict.status == "failed" and verdict.message.startswith(
        "call 2 of your scan backward answered otherwise than the reference's on the same "
        "inputs, so its time is not the cost of the work\nNVIDIA H200")
    cpu = observation("cpu", 1.0)
    cpu["yours"]["answers"], cpu["baseline"]["answers"] = \
        both["yours"]["answers"], both["baseline"]["answers"]
    verdict = judge_timing(cpu, device="cpu")
    assert verdict.status == "skipped" and verdict.message.startswith(
        "no CUDA device: CPU figures for information (call 2 of your scan backward answered")
    both["yours"]["answers"]["your scan backward"][1] = [4.0 + 1e-4, 9.0]  # float32 rounding
    assert judge_timing(both).status == "passed"


def test_a_figure_too_noisy_for_a_spread_says_so_instead_of_a_huge_percentage() -> None:
    """Issue 24: "±573%" read as a measurement; past half the median the line says the timing
    was too noisy, and a quiet figure keeps its spread."""
    both = observation("cuda", 2.5)
    noisy = both["yours"]["figures"]["your scan backward"]
    noisy["q1"], noisy["q3"] = noisy["median"] * 0.2, noisy["median"] * 11.66
    verdict = judge_timing(both)
    lines = {line.split("  ")[1]: line for line in verdict.message.splitlines() if " ms " in line}
    assert lines["your scan backward"].endswith("5.000 ms  too noisy to state a spread (n=20)")
    assert lines["your scan forward"].endswith("2.500 ms  ±2% (n=20)   1181.1 GFLOP/s")
    assert "573" not in verdict.message
