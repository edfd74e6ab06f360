"""Complexity measured outside the candidate's process: the growth rules of grader.checks.growth
and the cpu_growth kind's verdicts, on synthetic CPU times (no process is started here; the
known solutions grade real ones end to end).

Times are modelled as what a run pays whatever the size, plus work per unit of N (and per N^2
for the closed form), at the sizes N = 1, 8, 32 the prefix-products round uses."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest

from grader.checks.base import Context
from grader.checks.cases import Case
from grader.checks.growth import CEILING, FLOOR_SHARE, Timings, compare
from grader.checks.kinds import Spec, cpu_growth
from grader.rounds import RoundError, get_round

SIZES = (1, 8, 32)
LINEAR = (32 - 1) / (8 - 1)
CONSTANT = 0.020  # a process: the fork, the import, the inputs
PER_N = 0.0012  # the reference's work per unit of N, over all the calls of one run


def timings(per_n: float = PER_N, per_n2: float = 0.0, constant: float = CONSTANT) -> Timings:
    return Timings(*(constant + per_n * n + per_n2 * n * n for n in SIZES))


REFERENCE = timings()


@pytest.mark.parametrize("speed", [0.05, 0.3, 1.0, 3.0, 20.0])
def test_linear_work_at_any_speed_grows_no_faster_than_the_reference(speed: float) -> None:
    """(Much faster than the reference, below the floor, it even counts as growing slower.)"""
    growth = compare(timings(speed * PER_N, constant=0.013), REFERENCE, LINEAR)
    assert growth is not None and growth.excess < 1.0 + 1e-9
    assert speed < FLOOR_SHARE or growth.excess == pytest.approx(1.0)


def test_the_closed_form_grows_well_past_the_limit() -> None:
    """The closed form re-forms suffix products: about N^2 / 2 matmuls beside N of its own."""
    growth = compare(timings(PER_N, PER_N / 2), REFERENCE, LINEAR)
    assert growth is not None and growth.excess > 3


@pytest.mark.parametrize("slowed", [0.0005, 0.002, 0.004, 0.006, 0.0084, 0.01, 0.02, 0.2])
def test_a_slow_tiny_size_process_never_makes_linear_work_fail(slowed: float) -> None:
    """The tiny run's time is subtracted from both others: a slow one shrinks both differences,
    which would multiply the growth if the middle one could shrink to nothing. The floor bounds
    it at (g - 1 + FLOOR_SHARE) / FLOOR_SHARE times linear growth g (see growth.FLOOR_SHARE)."""
    clean = timings()
    growth = compare(Timings(clean.tiny + slowed, clean.middle, clean.large), REFERENCE, LINEAR)
    assert growth is not None
    assert growth.excess <= (LINEAR - 1 + FLOOR_SHARE) / FLOOR_SHARE / LINEAR + 1e-9 < 2.5


def test_below_the_floor_the_middle_work_counts_as_half_the_references() -> None:
    growth = compare(timings(PER_N / 4), REFERENCE, LINEAR)
    middle, large = REFERENCE.work()
    assert FLOOR_SHARE == 0.5
    assert growth is not None and growth.yours == pytest.approx((large / 4) / (middle / 2))


def test_a_fast_closed_form_still_fails_once_its_large_size_work_counts() -> None:
    """Faster than the reference at the middle size (its work is below the floor there), but
    its work at N = 32 is well past what linear growth from the floor allows."""
    fast = timings(PER_N / 40, PER_N / 25)
    assert fast.work()[0] < FLOOR_SHARE * REFERENCE.work()[0]
    growth = compare(fast, REFERENCE, LINEAR)
    assert growth is not None and growth.excess > 2.5


@pytest.mark.parametrize("slowed", [0.001, 0.003, 0.006, 0.05])
def test_a_slow_middle_run_of_the_reference_does_not_make_linear_work_look_fast(
        slowed: float) -> None:
    """The reference's growth counts as at least the expected order's own at these sizes."""
    noisy = Timings(REFERENCE.tiny, REFERENCE.middle + slowed, REFERENCE.large)
    growth = compare(timings(), noisy, LINEAR)
    assert growth is not None and growth.reference == LINEAR
    assert growth.excess <= 1.0


@pytest.mark.parametrize("slowed", [0.005, 0.008, 0.009, 0.03])
def test_a_slow_tiny_size_process_of_the_reference_lets_neither_order_pass_for_the_other(
        slowed: float) -> None:
    """It shrinks the reference's middle work to next to nothing: its growth looks huge, but
    counts at most a quarter more than the expected order's."""
    noisy = Timings(REFERENCE.tiny + slowed, REFERENCE.middle, REFERENCE.large)
    right = compare(timings(), noisy, LINEAR)
    assert right is not None and LINEAR <= right.reference <= CEILING * LINEAR
    assert right.excess <= 1.0
    closed = compare(timings(PER_N, PER_N / 2), noisy, LINEAR)
    assert closed is not None and closed.excess > 2.5


def test_a_reference_whose_large_size_took_no_longer_than_its_tiny_one_gives_nothing() -> None:
    assert compare(timings(), Timings(0.020, 0.019, 0.019), LINEAR) is None
    assert compare(timings(), Timings(0.080, 0.030, 0.060), LINEAR) is None


# --- the cpu_growth kind ----------------------------------------------------------------------


def _cases(rng: np.random.Generator) -> list[Case]:
    return [Case({"A": np.ones((n, 2))}, (("N", n),)) for n in SIZES]


def _spec(**table: Any) -> Spec:
    judge = SimpleNamespace(cases=_cases, two=lambda rng: _cases(rng)[1:])
    return Spec({"function": "f", "cases": "cases", "args": ["A"], "size": "N",
                 "repeats": {"numpy": 7, "torch": 3}, "growth_hint": "closed form", **table},
                "test", get_round("prefix-products"), judge, SimpleNamespace(),
                lambda names, where: ())  # type: ignore[arg-type]


def _plan(**table: Any):  # type: ignore[no-untyped-def]
    return cpu_growth(_spec(**table))(Context(seed=1, flavor="numpy", check_id="part3.cost"))


LINEAR_COUNTS = (2, 16, 64)
QUADRATIC_COUNTS = (2, 128, 2048)


def observed(yours: Timings, reference: Timings | None, counts: tuple[int, ...] = LINEAR_COUNTS,
             raised: dict[str, Any] | None = None) -> dict[str, Any]:
    """What the runner hands the judge: each run's data and the CPU seconds of its process."""
    def runs(times: Timings, count: tuple[int, ...]) -> list[dict[str, Any]]:
        return [{"data": {"raised": raised if i == 2 else None, "count": c}, "cpu_s": t}
                for i, (c, t) in enumerate(zip(count, (times.tiny, times.middle, times.large),
                                               strict=True))]

    return {"yours": runs(yours, counts),
            "baseline": None if reference is None else runs(reference, (0, 0, 0)),
            "baseline_error": "" if reference is not None else "the reference did not finish"}


CPU_LINE = ("CPU seconds of one process per size (N = 1, 8, 32): yours {}; the reference's "
            "0.021, 0.030, 0.058. Beyond N=1, from N=8 to N=32 your work grew x{}, the "
            "reference's x4.4")


def test_the_plan_runs_three_sizes_each_in_its_own_process_against_the_reference() -> None:
    plan = _plan()
    assert plan.probe == "timed_calls"
    assert plan.args == {"function": "f", "args": ["A"], "call": None, "measure": "flops",
                         "repeats": 7}
    nonces = [run["nonce"] for run in plan.runs]
    assert len(set(nonces)) == len(nonces) == 6  # every process its own inputs
    assert nonces == [run["nonce"] for run in _plan().runs]  # the same for the same seed
    assert [run["case"]["label"] for run in plan.runs] == [
        "N=1, float64", "N=8, float64", "N=32, float64"] * 2
    folder = str(get_round("prefix-products").folder)
    assert plan.baseline == ("timed_calls", {**plan.args, "reference": [folder, "part3"]})


def with_projections(observation: dict[str, Any], yours: list[list[float] | None],
                     reference: list[list[float] | None]) -> dict[str, Any]:
    """The observation with every run's results reduced as timed_calls reduces them."""
    for run in observation["yours"]:
        run["data"]["projections"] = yours
    for run in observation["baseline"]:
        run["data"]["projections"] = reference
    return observation


@pytest.mark.parametrize("yours", [
    [[1.0, 2.0], [3.0, 4.0], [3.0, 4.0]],   # a cached answer for a call on other inputs
    [[1.0, 2.0], [5.5, 6.0], [7.0, 8.0]],   # one call off by far more than rounding
    [[1.0, 2.0], None, [7.0, 8.0]],         # a result that is no array
    [[1.0, 2.0], [5.0, 6.0]],               # a call that gave nothing
    [[float("nan"), 2.0], [5.0, 6.0], [7.0, 8.0]],
])
def test_timed_calls_whose_results_differ_from_the_references_fail_whatever_their_time(
        yours: list[list[float] | None]) -> None:
    reference = [[1.0, 2.0], [5.0, 6.0], [7.0, 8.0]]
    verdict = _plan().judge(with_projections(observed(REFERENCE, REFERENCE), yours, reference))
    assert verdict.status == "failed"
    assert verdict.hint is not None and "inputs of its own" in verdict.hint


def test_timed_results_within_rounding_of_the_references_pass() -> None:
    reference = [[1.0, 2.0], [5.0, 6.0], [-7.0, 8.0]]
    yours = [[1.0 + 1e-13, 2.0], [5.0 - 5e-13, 6.0], [-7.0, 8.0]]
    verdict = _plan().judge(with_projections(observed(REFERENCE, REFERENCE), yours, reference))
    assert verdict.status == "passed"


def test_work_that_grows_like_the_references_passes_with_both_measures() -> None:
    verdict = _plan().judge(observed(REFERENCE, REFERENCE))
    assert verdict.status == "passed"
    assert verdict.message == ("matmul flops: 16 at N=8, 64 at N=32 (x4.0 for x4 N); "
                               + CPU_LINE.format("0.021, 0.030, 0.058", "4.4"))


def test_what_the_counter_sees_growing_fails_with_its_own_words_and_the_cpu_times() -> None:
    closed = timings(PER_N, PER_N / 2)
    verdict = _plan().judge(observed(closed, REFERENCE, QUADRATIC_COUNTS))
    assert verdict.status == "failed" and verdict.hint == "closed form"
    assert verdict.message.splitlines() == [
        "matmul flops: 128 at N=8, 2048 at N=32 (x16.0 for x4 N): the cost grows faster than "
        "linearly in N", CPU_LINE.format("0.022, 0.068, 0.673", "14.1")]


def test_work_hidden_from_the_counter_fails_on_its_cpu_time() -> None:
    closed = timings(PER_N, PER_N / 2)
    verdict = _plan().judge(observed(closed, REFERENCE))
    assert verdict.status == "failed" and verdict.hint == "closed form"
    assert verdict.message == (
        CPU_LINE.format("0.022, 0.068, 0.673", "14.1") + ": yours grows 3.2x faster than the "
        "reference's (at most 2.5x allowed); the matmul flops the counter saw grew slower, so "
        "the work is in calls it cannot see")
    unseen = _plan().judge(observed(closed, REFERENCE, (0, 0, 0)))
    assert unseen.status == "failed"
    assert "; the counter saw no matmul flops, so the work is in calls" in unseen.message


def test_right_work_the_counter_cannot_see_passes_on_its_cpu_time() -> None:
    verdict = _plan().judge(observed(REFERENCE, REFERENCE, (0, 0, 0)))
    assert verdict.status == "passed"
    assert verdict.message == (CPU_LINE.format("0.021, 0.030, 0.058", "4.4")
                               + " (the counter saw no matmul flops: CPU time decides)")


def test_a_reference_slower_to_grow_than_the_order_itself_counts_as_the_order() -> None:
    slow_middle = Timings(REFERENCE.tiny, REFERENCE.middle + 0.004, REFERENCE.large)
    verdict = _plan().judge(observed(REFERENCE, slow_middle))
    assert verdict.status == "passed"
    assert verdict.message.endswith("the reference's x3.0 (x4.4, the expected order's, counts)")


def test_without_the_references_times_the_counter_alone_decides() -> None:
    lost = _plan().judge(observed(REFERENCE, None))
    assert lost.status == "passed"
    assert lost.message.splitlines()[1] == ("CPU time not compared: the reference could not be "
                                            "run (the reference did not finish)")
    unseen = _plan().judge(observed(REFERENCE, None, (0, 0, 0)))
    assert unseen.status == "skipped"
    flat = _plan().judge(observed(REFERENCE, Timings(0.02, 0.02, 0.02), QUADRATIC_COUNTS))
    assert flat.status == "failed" and flat.message.splitlines()[1] == (
        "CPU seconds of one process per size (N = 1, 8, 32): yours 0.021, 0.030, 0.058; the "
        "reference's 0.020, 0.020, 0.020: not compared, the reference's work did not show")


def test_a_run_that_raised_is_reported_with_its_size() -> None:
    raised = {"type": "ValueError", "message": "no", "where": "", "bases": ["ValueError"]}
    verdict = _plan().judge(observed(REFERENCE, REFERENCE, raised=raised))
    assert verdict.status == "failed" and verdict.message == "N=32, float64: raised ValueError: no"


@pytest.mark.parametrize(("table", "error"), [
    ({"cases": "two"}, "cases must make three cases"),
    ({"exponent": 0}, "exponent must be above 0"),
    ({"repeats": {"numpy": 0}}, "repeats must be a positive whole number"),
    ({"repeats": 2.5}, "repeats must be a positive whole number"),
])
def test_a_cpu_growth_row_that_cannot_measure_is_an_error(table: dict[str, Any],
                                                          error: str) -> None:
    with pytest.raises(RoundError, match=error):
        _plan(**table)


def test_each_size_counts_its_least_cpu_time_over_the_rounds() -> None:
    """A process is charged more than its work now and then (a busy neighbour's cache, the
    scheduler), never less: of two rounds, the quieter one per size is the measure, so one
    slow tiny process (which would make linear work look like growth) fails nobody."""
    clean = observed(REFERENCE, REFERENCE)
    noisy_round = observed(Timings(REFERENCE.tiny, REFERENCE.middle, REFERENCE.large + 0.1),
                           Timings(REFERENCE.tiny + 0.01, REFERENCE.middle + 0.01,
                                   REFERENCE.large))
    assert _plan().judge(noisy_round).status == "failed"  # alone, the slow process decides
    both = {**clean, "yours": noisy_round["yours"] + clean["yours"],
            "baseline": clean["baseline"] + noisy_round["baseline"]}
    assert _plan().judge(both).status == "passed"
    quadratic = observed(timings(PER_N, PER_N / 2), REFERENCE)
    twice = {**quadratic, "yours": quadratic["yours"] * 2,
             "baseline": quadratic["baseline"] * 2}
    assert _plan().judge(twice).status == "failed"


def test_a_fixed_cost_far_above_the_references_work_fails_as_unmeasurable() -> None:
    """A process started per call (or a spin) costs more at the tiny size than the reference's
    whole work at the largest, and its noise would hide any growth beneath it."""
    buried = timings(PER_N, PER_N / 2, constant=20 * REFERENCE.large)
    verdict = _plan().judge(observed(buried, REFERENCE))
    assert verdict.status == "failed"
    assert "no growth can be measured" in verdict.message
    honest_but_slow = timings(3 * PER_N, constant=3 * CONSTANT)
    assert _plan().judge(observed(honest_but_slow, REFERENCE)).status == "passed"
