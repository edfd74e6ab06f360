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
from grader.checks.growth import CEILING, FLOOR, FLOOR_SHARE, Timings, compare
from grader.checks.kinds import GROWTH_ROUNDS, Spec, cpu_growth
from grader.checks.settle import DECIDING_ROUNDS
from grader.engine.rounds import RoundError, get_round

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
    """The reference's growth counts as at least 1/FLOOR of the expected order's own at these
    sizes: linear work then grows at most FLOOR times as fast as it, below the limit."""
    noisy = Timings(REFERENCE.tiny, REFERENCE.middle + slowed, REFERENCE.large)
    growth = compare(timings(), noisy, LINEAR)
    assert growth is not None and LINEAR / FLOOR <= growth.reference <= LINEAR
    assert growth.excess <= FLOOR < 2.0


@pytest.mark.parametrize("slowed", [0.005, 0.008, 0.009, 0.03])
def test_a_slow_tiny_size_process_of_the_reference_lets_neither_order_pass_for_the_other(
        slowed: float) -> None:
    """It shrinks the reference's middle work to next to nothing: its growth looks huge, but
    counts at most three quarters more than the expected order's. At the round's own sizes
    (N = 1, 8, 275) the closed form still grows past the round's limit (2) then."""
    sizes = (1, 8, 275)
    linear = (275 - 1) / (8 - 1)

    def at_sizes(per_n: float, per_n2: float = 0.0) -> Timings:
        return Timings(*(CONSTANT + per_n * n + per_n2 * n * n for n in sizes))

    clean = at_sizes(PER_N)
    noisy = Timings(clean.tiny + slowed, clean.middle, clean.large)
    right = compare(clean, noisy, linear)
    assert right is not None and linear / FLOOR <= right.reference <= CEILING * linear
    assert right.excess <= 1.0
    closed = compare(at_sizes(PER_N, PER_N / 2), noisy, linear)
    assert closed is not None and closed.excess > 2.0


def test_a_reference_whose_large_size_took_no_longer_than_its_tiny_one_gives_nothing() -> None:
    assert compare(timings(), Timings(0.020, 0.019, 0.019), LINEAR) is None
    assert compare(timings(), Timings(0.080, 0.030, 0.060), LINEAR) is None


# --- the cpu_growth kind ----------------------------------------------------------------------


def _cases(rng: np.random.Generator) -> list[Case]:
    return [Case({"A": np.ones((n, 2))}, (("N", n),)) for n in SIZES]


def _spec(**table: Any) -> Spec:
    judge = SimpleNamespace(cases=_cases, two=lambda rng: _cases(rng)[1:])
    return Spec({"function": "f", "cases": "cases", "args": ["A"], "size": "N",
                 "repeats": {"numpy": 7, "torch": 3}, "middle_calls": 1, "large_calls": 1,
                 "growth_hint": "closed form", **table},
                "test", get_round("prefix-products"), judge, SimpleNamespace(),
                lambda names, where: ())  # type: ignore[arg-type]


def _plan(**table: Any):  # type: ignore[no-untyped-def]
    return cpu_growth(_spec(**table))(Context(seed=1, flavor="numpy", check_id="part3.cost"))


LINEAR_COUNTS = (2, 16, 64)
QUADRATIC_COUNTS = (2, 128, 2048)


def runs(times: Timings, count: tuple[int, ...] = (0, 0, 0),
         raised: dict[str, Any] | None = None, first: bool = False) -> list[dict[str, Any]]:
    """One round: each size's run data and the CPU seconds of its process, after the counted
    runs at the two growing sizes in the first round."""
    counted = [{"data": {"raised": None, "count": c}, "cpu_s": 0.03} for c in count[1:]]
    timed = [{"data": {"raised": raised if i == 3 else None, "count": 0}, "cpu_s": t}
             for i, t in enumerate((times.tiny, times.middle, times.tiny, times.large))]
    return counted * first + timed


def observed(yours: Timings, reference: Timings | None, counts: tuple[int, ...] = LINEAR_COUNTS,
             raised: dict[str, Any] | None = None, rounds: int = 2) -> dict[str, Any]:
    """What the runner hands the judge after `rounds` rounds that measured alike (a quiet
    machine)."""
    return {"yours": [runs(yours, counts, raised, n == 0) for n in range(rounds)],
            "baseline": None if reference is None else [runs(reference, first=n == 0)
                                                        for n in range(rounds)],
            "baseline_error": "" if reference is not None else "the reference did not finish"}


def measured(yours: list[Timings], reference: list[Timings],
             counts: tuple[int, ...] = (0, 0, 0)) -> dict[str, Any]:
    """Rounds that measured differently, round by round."""
    return {"yours": [runs(t, counts, first=n == 0) for n, t in enumerate(yours)],
            "baseline": [runs(t, first=n == 0) for n, t in enumerate(reference)],
            "baseline_error": ""}


CPU_LINE = ("CPU seconds of one process each (N = 1 and 8, 7 calls each; N = 1 and 32, 7 calls "
            "each): yours {}; the reference's 0.021 and 0.030, 0.021 and 0.058. Beyond N=1, "
            "from N=8 to N=32 your work per call grew x{}, the reference's x4.4; at N=32 it cost "
            "{}x the reference's")


def test_the_plan_runs_three_sizes_each_in_its_own_process_against_the_reference() -> None:
    plan = _plan()
    assert plan.probe == "timed_calls"
    assert plan.args == {"function": "f", "args": ["A"], "call": None, "measure": "flops",
                         "watch": False}
    assert plan.measured is not None and plan.measured.least == DECIDING_ROUNDS
    every_run = [run for runs in plan.measured.rounds for run in runs]
    nonces = [run["nonce"] for run in every_run]
    assert nonces == [run["nonce"] for runs in _plan().measured.rounds
                      for run in runs]  # the same for the same seed
    assert len(set(nonces)) == len(nonces) == 4 * GROWTH_ROUNDS + 2  # each process its inputs
    assert [(run["case"]["label"], run["repeats"]) for run in every_run] == [
        ("N=8, float64", 0), ("N=32, float64", 0)] + [
        ("N=1, float64", 7), ("N=8, float64", 7), ("N=1, float64", 7),
        ("N=32, float64", 7)] * GROWTH_ROUNDS
    default = cpu_growth(_spec(middle_calls=4, large_calls=0.5))(
        Context(seed=1, flavor="numpy", check_id="part3.cost"))
    assert [run["repeats"] for run in default.measured.rounds[1]] == [28, 28, 4, 4]
    folder = str(get_round("prefix-products").folder)
    assert plan.baseline == ("timed_calls", {**plan.args, "reference": [folder, "part3"]})


def with_projections(observation: dict[str, Any], yours: list[list[float] | None],
                     reference: list[list[float] | None]) -> dict[str, Any]:
    """The observation with every run's results reduced as timed_calls reduces them."""
    for run in (run for runs in observation["yours"] for run in runs):
        run["data"]["projections"] = yours
    for run in (run for runs in observation["baseline"] for run in runs):
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
    assert not verdict.alone  # wrong values: the checks of values in `after` explain it


def test_timed_results_within_rounding_of_the_references_pass() -> None:
    reference = [[1.0, 2.0], [5.0, 6.0], [-7.0, 8.0]]
    yours = [[1.0 + 1e-13, 2.0], [5.0 - 5e-13, 6.0], [-7.0, 8.0]]
    verdict = _plan().judge(with_projections(observed(REFERENCE, REFERENCE), yours, reference))
    assert verdict.status == "passed"


def test_work_that_grows_like_the_references_passes_with_both_measures() -> None:
    verdict = _plan().judge(observed(REFERENCE, REFERENCE))
    assert verdict.status == "passed"
    assert verdict.message == ("matmul flops: 16 at N=8, 64 at N=32 (x4.0 for x4 N); "
                               + CPU_LINE.format("0.021 and 0.030, 0.021 and 0.058", "4.4", "1.0"))


def test_what_the_counter_sees_growing_fails_with_its_own_words_and_the_cpu_times() -> None:
    closed = timings(PER_N, PER_N / 2)
    verdict = _plan().judge(observed(closed, REFERENCE, QUADRATIC_COUNTS))
    assert verdict.status == "failed" and verdict.hint == "closed form"
    assert verdict.message.splitlines() == [
        "matmul flops: 128 at N=8, 2048 at N=32 (x16.0 for x4 N): the cost grows faster than "
        "linearly in N", CPU_LINE.format("0.022 and 0.068, 0.022 and 0.673", "14.1", "17.5")]


def test_work_hidden_from_the_counter_fails_on_its_cpu_time() -> None:
    closed = timings(PER_N, PER_N / 2)
    verdict = _plan().judge(observed(closed, REFERENCE))
    assert verdict.status == "failed" and verdict.hint == "closed form"
    assert verdict.message == (
        CPU_LINE.format("0.022 and 0.068, 0.022 and 0.673", "14.1", "17.5")
        + ": yours grows 3.2x faster than the reference's (at most 2.5x allowed); the matmul "
        "flops the counter saw grew slower, so the work is in calls it cannot see")
    unseen = _plan().judge(observed(closed, REFERENCE, (0, 0, 0)))
    assert unseen.status == "failed"
    assert "; the counter saw no matmul flops, so the work is in calls" in unseen.message


def test_right_work_the_counter_cannot_see_passes_on_its_cpu_time() -> None:
    verdict = _plan().judge(observed(REFERENCE, REFERENCE, (0, 0, 0)))
    assert verdict.status == "passed"
    assert verdict.message == (CPU_LINE.format("0.021 and 0.030, 0.021 and 0.058", "4.4", "1.0")
                               + " (the counter saw no matmul flops: CPU time decides)")


def test_a_reference_far_slower_to_grow_than_the_order_itself_counts_within_a_third() -> None:
    slow_middle = Timings(REFERENCE.tiny, REFERENCE.middle + 0.004, REFERENCE.large)
    verdict = _plan().judge(observed(REFERENCE, slow_middle))
    assert verdict.status == "passed"
    assert verdict.message.endswith("the reference's x3.0; at N=32 it cost 1.0x the reference's")
    slower = Timings(REFERENCE.tiny, REFERENCE.middle + 0.008, REFERENCE.large)
    verdict = _plan().judge(observed(REFERENCE, slower))
    assert verdict.status == "passed"
    assert verdict.message.endswith("the reference's x2.3 (x3.0 counts: the expected order's "
                                    "x4.4, give or take noise); at N=32 it cost 1.0x the "
                                    "reference's")


def test_without_the_references_times_the_counter_alone_decides() -> None:
    lost = _plan().judge(observed(REFERENCE, None))
    assert lost.status == "passed"
    assert lost.message.splitlines()[1] == ("CPU time not compared: the reference could not be "
                                            "run (the reference did not finish)")
    unseen = _plan().judge(observed(REFERENCE, None, (0, 0, 0)))
    assert unseen.status == "skipped"
    flat = _plan().judge(observed(REFERENCE, Timings(0.02, 0.02, 0.02), QUADRATIC_COUNTS))
    assert flat.status == "failed" and flat.message.splitlines()[1] == (
        "CPU seconds of one process each (N = 1 and 8, 7 calls each; N = 1 and 32, 7 calls "
        "each): yours 0.021 and 0.030, 0.021 and 0.058; the reference's 0.020 and 0.020, 0.020 "
        "and 0.020: not compared, the reference's work did not show")


def test_a_run_that_raised_is_reported_with_its_size() -> None:
    raised = {"type": "ValueError", "message": "no", "where": "", "bases": ["ValueError"]}
    verdict = _plan().judge(observed(REFERENCE, REFERENCE, raised=raised))
    assert verdict.status == "failed" and verdict.message == "N=32, float64: raised ValueError: no"


@pytest.mark.parametrize(("table", "error"), [
    ({"cases": "two"}, "cases must make three cases"),
    ({"exponent": 0}, "exponent must be above 0"),
    ({"repeats": {"numpy": 0}}, "repeats must be a positive whole number"),
    ({"repeats": 2.5}, "repeats must be a positive whole number"),
    ({"no_autograd": "yes"}, "no_autograd must be true or false"),
])
def test_a_cpu_growth_row_that_cannot_measure_is_an_error(table: dict[str, Any],
                                                          error: str) -> None:
    with pytest.raises(RoundError, match=error):
        _plan(**table)


def test_a_call_under_the_counter_is_stopped_at_fifty_times_the_references_process() -> None:
    """The reference's process making the same call ran just before: a call of another order
    (a forward per input entry) is stopped there, not let run for minutes, and fails with the
    growth's hint; the timed runs' caps are untouched."""
    plan = _plan()
    assert plan.measured is not None and plan.measured.cap is not None
    reference_run = {"data": {"raised": None, "count": 2}, "cpu_s": 0.03}
    assert plan.measured.cap({"yours": [[]], "baseline": [[reference_run]]}) == \
        pytest.approx(1.5)
    assert plan.measured.cap({"yours": [[reference_run]],
                              "baseline": [[reference_run, reference_run]]}) == \
        pytest.approx(1.5)
    stopped = observed(REFERENCE, REFERENCE)
    stopped["yours"][0][1] = {"data": None, "cpu_s": 1.51, "capped": True}
    for verdict in (plan.judge(stopped), plan.measured.early(stopped)):
        assert verdict is not None and verdict.status == "failed"
        assert verdict.message == ("at N = 32 one call of yours, under the counter, cost more "
                                   "than 50x the reference's process making the same call "
                                   "(0.030 s of CPU) and was stopped at 1.51 s: its work there "
                                   "is many times the reference's")
        assert verdict.hint == "closed form"
        assert verdict.alone  # a cost: no failed check of values explains it


def test_autograd_seen_in_a_watched_call_under_the_counter_fails_the_check() -> None:
    """With no_autograd = true the call under the counter runs under the autograd watch: a
    backward that answers only the call no_autograd watches by hand is seen here."""
    plan = _plan(no_autograd=True)
    assert plan.args["watch"] is True
    seen = observed(REFERENCE, REFERENCE)
    seen["yours"][0][0]["data"]["autograd"] = 1
    for verdict in (plan.judge(seen), plan.measured.early(seen)):
        assert verdict is not None and verdict.status == "failed"
        assert verdict.message == ("at N = 8 autograd ran inside your call under the counter, "
                                   "watched as the check that looks for autograd watches")
        assert verdict.hint is not None and "whether or not a call looks watched" in verdict.hint
        assert verdict.alone and verdict.voids  # the part's values lose their points
    seen["yours"][0][0]["data"]["autograd"] = 0
    assert plan.judge(seen).status == "passed"


def test_each_size_counts_its_least_cpu_time_over_the_rounds() -> None:
    """A process is charged more than its work now and then (a busy neighbour's cache, the
    scheduler), never less: over the rounds, the quietest process per size is the measure."""
    noisy_yours = Timings(REFERENCE.tiny, REFERENCE.middle, REFERENCE.large + 0.1)
    noisy_reference = Timings(REFERENCE.tiny + 0.01, REFERENCE.middle + 0.01, REFERENCE.large)
    alone = measured([noisy_yours] * 2, [noisy_reference] * 2)
    assert _plan().judge(alone).status == "failed"  # alone, slow processes in agreement decide
    mixed = measured([noisy_yours, REFERENCE, REFERENCE, REFERENCE],
                     [REFERENCE, noisy_reference, REFERENCE, REFERENCE])
    verdict = _plan().judge(mixed)
    assert verdict.status == "passed"
    assert CPU_LINE.format("0.021 and 0.030, 0.021 and 0.058", "4.4", "1.0") in verdict.message


def test_rounds_that_disagree_leave_the_verdict_undecided_until_they_agree() -> None:
    """One round saying "too fast a growth" and the next "fine" decides nothing: the judge
    asks for another round, and decides once the last rounds agree with the estimate over all
    of them: two where the reference's runs measure alike, three where the same size's runs of
    the reference's spread more than QUIET_SPREAD (a busy machine: they run no candidate code).
    The candidate's runs spreading beside tight ones of the reference's are the code's own
    doing and buy no extra round."""
    noisy = Timings(REFERENCE.tiny, REFERENCE.middle, REFERENCE.large + 0.1)
    first_two = measured([noisy, REFERENCE], [REFERENCE, REFERENCE])
    verdict = _plan().judge(first_two)
    assert verdict.status == "undecided"
    assert verdict.message.endswith("yours grows 1.0x faster than the reference's, but as rounds "
                                    "came in the estimate did not settle on one side of the "
                                    "limit (2.5x): 3.7x, 1.0x")
    assert _plan().judge(measured([noisy, REFERENCE, REFERENCE],
                                  [REFERENCE] * 3)).status == "passed"
    busy = Timings(REFERENCE.tiny, REFERENCE.middle * 1.5, REFERENCE.large)
    machine = [noisy, REFERENCE, REFERENCE], [REFERENCE, busy, REFERENCE]
    assert _plan().judge(measured(*machine)).status == "undecided"
    assert _plan().judge(measured(machine[0] + [REFERENCE],
                                  machine[1] + [REFERENCE])).status == "passed"
    slightly = Timings(REFERENCE.tiny, REFERENCE.middle, REFERENCE.large * 1.2)
    assert _plan().judge(measured([slightly, REFERENCE], [REFERENCE] * 2)).status == "passed"


def test_code_that_pads_a_random_share_of_its_processes_is_judged_on_its_quietest() -> None:
    """Work padded onto some of the candidate's processes at random (a hidden growth made to
    look like a busy machine's noise) spreads its runs while the reference's stay tight: it
    is judged on its least time per size, as on a quiet machine, and fails once two rounds
    agree, never left undecided with its points held."""
    grows = Timings(REFERENCE.tiny, REFERENCE.middle, REFERENCE.large * 3.2)
    padded_middle = Timings(REFERENCE.tiny, REFERENCE.middle * 2.0, REFERENCE.large * 3.2)
    padded_large = Timings(REFERENCE.tiny, REFERENCE.middle, REFERENCE.large * 6.0)
    rounds = [padded_large, grows, padded_middle, grows, padded_large]
    for count in (2, 3, 4, 5):
        verdict = _plan().judge(measured(rounds[:count], [REFERENCE] * count))
        assert verdict.status == "failed", (count, verdict.message)


REAL_SIZES = (1, 8, 96)


def _real_plan():  # type: ignore[no-untyped-def]
    """The check as prefix-products sets it: its sizes, calls and limit."""
    def cases(rng: np.random.Generator) -> list[Case]:
        return [Case({"A": np.ones((n, 2))}, (("N", n),)) for n in REAL_SIZES]

    spec = _spec(limit=2.0, middle_calls=4, large_calls=0.5, repeats=150)
    spec.judge.cases = cases
    return cpu_growth(spec)(Context(seed=1, flavor="numpy", check_id="part3.cost"))


def _process(rng: np.random.Generator, calls: int, per_call: float, load: float,
             slow: float) -> float:
    """What a busy machine charges a process that costs 20 ms plus `calls` calls: its work
    times a factor over 1 (the machine's load of the moment, `slow`, and the process's own
    luck), plus a few milliseconds by chance."""
    work = 0.019 + calls * per_call
    return work * (slow + load * 0.15 * rng.gamma(4) / 4) + load * rng.exponential(0.004)


def _round(rng: np.random.Generator, per_call: Any, load: float, first: bool) -> list[float]:
    slow = 1 + load * 0.15 * rng.gamma(2) / 2
    counted = [0.03, 0.03] if first else []
    runs = [(600, 1), (600, 8), (75, 1), (75, 96)]
    return counted + [_process(rng, calls, per_call(n), load, slow) for calls, n in runs]


@pytest.mark.parametrize("load", [0.0, 0.3, 1.0, 2.0, 4.0])
def test_noise_leaves_a_growth_undecided_far_more_often_than_it_turns_it_over(
        load: float) -> None:
    """The property the rounds are for, on CPU times modelled on the reference's and the
    closed form's at the round's sizes and calls: whatever a busy machine adds (here, a load
    that changes from round to round, and each process's own luck: on average up to 2.2
    times its work at load 4), at most 1 in 100 of the verdicts on linear backwards and on
    closed forms is turned over, what else noise would have turned over is reported
    undecided, and a quiet machine decides everything. (The runner measures up to
    GROWTH_ROUNDS rounds, as here.)"""
    rng = np.random.default_rng(int(load * 10))
    plan = _real_plan()
    models = {"linear": lambda n: 1e-5 + 1.5e-5 * n,
              "closed": lambda n: 1e-5 + 2e-5 * n + 3e-6 * n * n}
    outcomes: dict[str, list[str]] = {"linear": [], "closed": []}
    early = {"linear": 0, "closed": 0}
    for name, per_call in models.items():
        for _ in range(200):
            rounds: list[tuple[list[float], list[float]]] = []
            verdict = None
            for number in range(GROWTH_ROUNDS):
                rounds.append((_round(rng, per_call, load, number == 0),
                               _round(rng, models["linear"], load, number == 0)))
                so_far = {"yours": [[{"data": {"raised": None, "count": 0}, "cpu_s": t}
                                     for t in mine] for mine, _ in rounds],
                          "baseline": [[{"data": {"raised": None, "count": 0}, "cpu_s": t}
                                        for t in theirs] for _, theirs in rounds],
                          "baseline_error": ""}
                verdict = plan.measured.early(so_far) if number == 0 else None
                if verdict is not None:
                    early[name] += 1
                    break
                if number + 1 >= DECIDING_ROUNDS:
                    verdict = plan.judge(so_far)
                    if verdict.status != "undecided":
                        break
            assert verdict is not None
            outcomes[name].append(verdict.status)
    turned = outcomes["linear"].count("failed") + outcomes["closed"].count("passed")
    assert turned <= 4  # of 400
    if load == 0:
        assert outcomes["linear"] == ["passed"] * 200 and outcomes["closed"] == ["failed"] * 200
    if load <= 0.3:
        assert outcomes["linear"].count("undecided") + outcomes["closed"].count("undecided") <= 2
        assert early["linear"] >= 190  # one round settles what is clearly within the limits
    assert early["closed"] == 0  # a failure always waits for the rounds that settle it


def test_one_round_settles_a_pass_only_with_room_to_spare_on_both_measures() -> None:
    """After its first round, code whose CPU times sit within both limits by CLEAR_MARGIN has
    passed (a second round could not move it that far); closer to a limit, or past one, the
    rounds go on (a failure is never reported from one round)."""
    plan = _plan()
    assert plan.measured is not None and plan.measured.early is not None
    clear = plan.measured.early(observed(REFERENCE, REFERENCE, rounds=1))
    assert clear is not None and clear.status == "passed"
    assert clear.message == _plan().judge(observed(REFERENCE, REFERENCE)).message
    # The first round's runs so far, its last one not in yet: nothing to judge.
    partial = observed(REFERENCE, REFERENCE, rounds=1)
    partial["yours"][0].pop()
    assert plan.measured.early(partial) is None
    close_growth = timings(PER_N * 0.5, PER_N * 0.02)  # grows about 2x as fast, under 2.5
    close = observed(close_growth, REFERENCE, rounds=1)
    assert plan.judge(observed(close_growth, REFERENCE)).status == "passed"
    assert plan.measured.early(close) is None
    costly = timings(8 * PER_N)  # 8x the reference's work per call: within 10, not by 1.5x
    assert plan.judge(observed(costly, REFERENCE)).status == "passed"
    assert plan.measured.early(observed(costly, REFERENCE, rounds=1)) is None
    closed = timings(PER_N, PER_N / 2)
    assert plan.measured.early(observed(closed, REFERENCE, rounds=1)) is None


def test_a_fixed_cost_far_above_the_references_work_fails_as_unmeasurable() -> None:
    """A process started per call (or a spin) costs more at the tiny size than the reference's
    whole work at the largest, and its noise would hide any growth beneath it."""
    buried = timings(PER_N, PER_N / 2, constant=20 * REFERENCE.large)
    verdict = _plan().judge(observed(buried, REFERENCE))
    assert verdict.status == "failed"
    assert "no growth can be measured" in verdict.message
    honest_but_slow = timings(3 * PER_N, constant=3 * CONSTANT)
    assert _plan().judge(observed(honest_but_slow, REFERENCE)).status == "passed"


def test_a_large_size_run_stopped_at_the_cap_in_every_round_fails_whatever_the_pooled_ratio(
        ) -> None:
    """A stopped run's CPU time is a lower bound on its cost. Pooled with the other rounds'
    cheapest runs it can read as a growth just inside the limit (a closed form passed on some
    seeds that way); stopped in every round, the code is past the cap's growth, and fails."""
    inside = Timings(REFERENCE.tiny, REFERENCE.middle, REFERENCE.large * 1.5)
    both = measured([inside] * 2, [REFERENCE] * 2)
    assert _plan().judge(both).status == "passed"
    for runs_of_a_round in both["yours"]:
        runs_of_a_round[-1]["capped"] = True
    verdict = _plan().judge(both)
    assert verdict.status == "failed" and verdict.hint == "closed form"
    assert verdict.message.endswith(
        "at N = 32 yours was stopped in every round, once it had cost more than code growing "
        "3.75x faster than the reference's could; the counter saw no matmul flops, so the work "
        "is in calls it cannot see")
    both["yours"][1][-1]["capped"] = False  # stopped in one round only: the rounds decide
    assert _plan().judge(both).status == "passed"


def test_a_large_run_stopped_at_its_cost_limit_in_every_round_gets_the_large_sizes_hint(
        ) -> None:
    """Work padded at the middle size raises the growth's bound past the large size's cost
    limit: a large run stopped there in every round was stopped for its cost, and gets the hint
    it would have got had it been let finish (a busy machine lets fewer runs finish, and must
    not change the hint); with the middle size's work as the reference's, the growth's bound is
    the lower and its hint stays."""
    flat = padded(40)
    for middle, hint in ((flat, "padded"), (REFERENCE, "closed form")):
        stopped = Timings(middle.tiny, middle.middle, REFERENCE.large * 1.5)
        both = measured([stopped] * 2, [REFERENCE] * 2)
        for runs_of_a_round in both["yours"]:
            runs_of_a_round[-1]["capped"] = True
        verdict = _plan(large_hint="padded").judge(both)
        assert (verdict.status, verdict.hint) == ("failed", hint)
        past = "code costing 15x its work per call there" if hint == "padded" else \
            "code growing 3.75x faster than the reference's"
        assert f"once it had cost more than {past} could" in verdict.message


@pytest.mark.parametrize(("slowed", "hint"), [
    (1.6, "closed form"), (2.5, "closed form"), (4.0, "closed form"),  # a busy machine
    (40.0, "padded"),                                                # padding
])
def test_a_closed_form_stopped_in_every_round_keeps_its_hint_however_slow_its_middle_run(
        slowed: float, hint: str) -> None:
    """A busy machine slows a closed form's middle run, and with it raises the growth's cap
    past the cost's: its large run is then stopped at the cost's cap. The growth up to that
    stop is a lower bound, still far past its limit: the hint stays the growth's. Only middle
    work many times the reference's (padding) brings that bound within, and the cost's hint."""
    work = REFERENCE.middle - REFERENCE.tiny
    stopped = Timings(REFERENCE.tiny, REFERENCE.tiny + slowed * work,
                      REFERENCE.tiny + 16 * (REFERENCE.large - REFERENCE.tiny))
    both = measured([stopped] * 3, [REFERENCE] * 3)
    for runs_of_a_round in both["yours"]:
        runs_of_a_round[-1]["capped"] = True
    verdict = _plan(large_hint="padded").judge(both)
    assert (verdict.status, verdict.hint) == ("failed", hint), verdict.message
    assert "stopped in every round" in verdict.message


def test_a_cost_that_settles_first_does_not_take_the_hint_from_a_growth_over_its_limit() -> None:
    """On a busy machine the growth needs a wider margin to settle than the large size's cost
    of the same code: when the cost settles first, a growth past its limit in every round
    still names the mistake (its hint), as it would once settled; within its limit, the
    cost's hint."""
    work = REFERENCE.middle - REFERENCE.tiny
    large = REFERENCE.tiny + 14 * (REFERENCE.large - REFERENCE.tiny)
    for middle, hint in (((4.6, 7.0, 5.0), "closed form"), ((7.0, 9.0, 8.0), "padded")):
        yours = [Timings(REFERENCE.tiny, REFERENCE.tiny + m * work, large) for m in middle]
        verdict = _plan(large_hint="padded").judge(measured(yours, [REFERENCE] * 3))
        assert (verdict.status, verdict.hint) == ("failed", hint), verdict.message


@pytest.mark.parametrize(("stopped", "hint"), [
    ((-3,), "padded"),              # the middle size alone: its work is the cost
    ((-4, -3), "overhead"),         # the tiny size too: a fixed cost hides any growth
    ((-2,), "overhead"),
])
def test_small_runs_stopped_in_every_round_name_work_or_overhead(stopped: tuple[int, ...],
                                                                 hint: str) -> None:
    """A middle-size run stopped at the small runs' limit in every round, its tiny runs cheap:
    the work at that size is many times the reference's (padding, or a slow algorithm), and
    the large size's hint says so. A tiny run stopped too: a fixed cost, the overhead hint."""
    from grader.checks.kinds import OVERHEAD_HINT

    both = measured([REFERENCE] * 2, [REFERENCE] * 2)
    for runs_of_a_round in both["yours"]:
        for index in stopped:
            runs_of_a_round[index]["capped"] = True
    verdict = _plan(large_hint="padded").judge(both)
    assert verdict.status == "failed"
    assert verdict.hint == ("padded" if hint == "padded" else OVERHEAD_HINT)
    if hint == "padded":
        assert "at N = 8 yours cost more than 10x the reference's process making the same " \
            "calls, in every round, where its runs at N = 1 did not" in verdict.message


def _so_far(runs_done: list[dict[str, Any]]) -> dict[str, Any]:
    """The first round, its runs to date, as the runner asks Measured.early after each."""
    return {"yours": [runs_done], "baseline": [[]], "baseline_error": ""}


def test_a_count_that_grows_too_fast_decides_before_any_timed_run() -> None:
    """The counter's failure comes first in every verdict the CPU times could give: once the
    two counted runs show it, no timed round is run for it."""
    early = _plan().measured.early
    closed = runs(REFERENCE, QUADRATIC_COUNTS, first=True)
    assert early(_so_far(closed[:1])) is None  # one counted run: nothing to compare yet
    verdict = early(_so_far(closed[:2]))
    assert verdict is not None and verdict.status == "failed" and verdict.hint == "closed form"
    assert verdict.message.splitlines() == [
        "matmul flops: 128 at N=8, 2048 at N=32 (x16.0 for x4 N): the cost grows faster than "
        "linearly in N", "CPU time not measured: the count alone decides"]
    full = _plan().judge(observed(timings(PER_N, PER_N / 2), REFERENCE, QUADRATIC_COUNTS))
    assert (full.status, full.hint, full.message.splitlines()[0]) == (
        verdict.status, verdict.hint, verdict.message.splitlines()[0])


@pytest.mark.parametrize("counts", [LINEAR_COUNTS, (0, 0, 0)])
def test_a_count_that_grows_right_or_unseen_leaves_the_times_to_decide(
        counts: tuple[int, ...]) -> None:
    early = _plan().measured.early
    done = runs(REFERENCE, counts, first=True)
    assert all(early(_so_far(done[:n])) is None for n in range(len(done) + 1))


def test_a_timed_run_that_raised_ends_the_measurement_with_its_size() -> None:
    raised = {"type": "ValueError", "message": "no", "where": "", "bases": ["ValueError"]}
    done = runs(REFERENCE, LINEAR_COUNTS, raised, first=True)
    verdict = _plan().measured.early(_so_far(done))
    assert verdict is not None and verdict.message == "N=32, float64: raised ValueError: no"


def test_once_a_smaller_run_of_a_round_is_stopped_its_large_run_has_the_cost_limit_alone() -> None:
    """The middle run stopped, its work per call (and so any growth) is unknown: the large run
    is stopped at the large-size limit's cost, CAP_MARGIN times `large_limit` times the
    reference's work per call there, beyond the candidate's own tiny run. The tiny run before
    it stopped, its fixed cost is unknown too: the small runs' limit (that many times the
    reference's same run) stops it."""
    from grader.checks.kinds import CAP_MARGIN, LARGE_RUN_LIMIT, SMALL_RUN_LIMIT

    cap = _plan().measured.cap
    mine, theirs = runs(REFERENCE, first=True), runs(REFERENCE, first=True)
    so_far = {"yours": [mine[:5]], "baseline": [theirs[:6]], "baseline_error": ""}
    growth_cap = cap(so_far)
    mine[3]["capped"] = True  # the middle size, stopped
    reference_work = theirs[5]["cpu_s"] - theirs[4]["cpu_s"]
    assert cap(so_far) == pytest.approx(
        mine[4]["cpu_s"] + CAP_MARGIN * LARGE_RUN_LIMIT * reference_work)
    assert cap(so_far) != pytest.approx(growth_cap)
    mine[4]["capped"] = True  # and the tiny size before the large one
    assert cap(so_far) == pytest.approx(SMALL_RUN_LIMIT * theirs[5]["cpu_s"])


def padded(cost: float) -> Timings:
    """Work padded at every size past the tiny one to cost `cost` times the reference's work
    per call at the large size: flat from the middle size to the large one."""
    work = cost * REFERENCE.work()[1]
    return Timings(REFERENCE.tiny, REFERENCE.tiny + work, REFERENCE.tiny + work)


def test_work_padded_flat_fails_on_its_cost_at_the_large_size() -> None:
    """Padding the smaller sizes' work flattens a wrong order's growth, never its cost at the
    largest size: there it pays its order's work, many times the reference's."""
    verdict = _plan(large_hint="pads").judge(observed(padded(12.0), REFERENCE))
    assert verdict.status == "failed" and verdict.hint == "pads"
    assert verdict.message.endswith(
        "at N=32 it cost 12.0x the reference's: at N = 32 your work per call costs 12.0x the "
        "reference's (at most 10x allowed); the matmul flops the counter saw grew slower")
    assert _plan().judge(observed(padded(12.0), REFERENCE)).hint == "closed form"
    assert _plan(large_limit=15).judge(observed(padded(12.0), REFERENCE)).status == "passed"


@pytest.mark.parametrize("constant", [0.3, 1.0, 3.0, 6.0, 9.0])
def test_right_order_work_with_a_slow_constant_passes_within_the_large_size_limit(
        constant: float) -> None:
    verdict = _plan().judge(observed(timings(constant * PER_N, constant=0.021), REFERENCE))
    assert verdict.status == "passed", verdict.message


def test_the_large_runs_cap_is_the_lesser_of_the_growth_and_the_cost_that_fail() -> None:
    """A run at the large size is stopped once it costs CAP_MARGIN times either limit: a
    middle run that was itself slow (padded) no longer lifts the large run's cap with it."""
    from grader.checks.kinds import CAP_MARGIN

    cap = _plan().measured.cap
    mine, theirs = runs(padded(40.0), first=True), runs(REFERENCE, first=True)
    so_far = {"yours": [mine[:5]], "baseline": [theirs[:6]], "baseline_error": ""}
    work = (theirs[5]["cpu_s"] - theirs[4]["cpu_s"]) / 7
    assert cap(so_far) == pytest.approx(mine[4]["cpu_s"] + CAP_MARGIN * 10 * work * 7)


@pytest.mark.parametrize(("estimates", "noisy", "decided"), [
    ((2.6, 2.7), False, True),          # quiet: two past the limit fail
    ((2.6, 2.7, 2.8), True, None),      # busy: past the limit, within the spread it allows
    ((3.2, 3.3, 3.4), True, True),      # busy: past it by more than that spread
    ((2.0, 1.9, 2.4), True, False),     # busy: within the limit passes as ever
    ((3.2, 2.6, 3.4), True, None),
])
def test_a_busy_machine_fails_growth_only_past_the_limit_by_its_own_spread(
        estimates: tuple[float, ...], noisy: bool, decided: bool | None) -> None:
    """A busy machine charges the longer runs more, inflating the very growth judged: there a
    failure must clear the limit (2.5 here) by the spread a quiet machine allows."""
    from grader.checks.settle import settled

    assert settled(list(estimates), 2.5, noisy) is decided


# --- the timed calls' inputs and results ------------------------------------------------------


def test_every_timed_call_gets_inputs_of_its_own_in_every_entry() -> None:
    """No call can answer from an earlier one's inputs: each differs from every other call's,
    and from the case's, in every floating-point entry, within FRESH_SPREAD; the same nonce
    (the reference's run) gives the same inputs, another nonce others."""
    from grader.probes.library import FRESH_SPREAD, fresh_cases

    case = {"inputs": {"W": np.random.default_rng(0).standard_normal((5, 3, 3)),
                       "k": np.arange(4)}}
    at = fresh_cases(case, nonce=11, repeats=6)
    calls = [at(index)["inputs"] for index in range(1, 7)]
    for index, inputs in enumerate(calls):
        assert inputs["k"] is case["inputs"]["k"]
        ratio = inputs["W"] / case["inputs"]["W"]
        assert np.all(np.abs(ratio - 1) <= FRESH_SPREAD) and np.all(ratio != 1)
        for other in calls[index + 1:]:
            assert np.all(inputs["W"] != other["W"])
    assert np.array_equal(fresh_cases(case, 11, 6)(3)["inputs"]["W"], calls[2]["W"])
    assert not np.any(fresh_cases(case, 12, 6)(3)["inputs"]["W"] == calls[2]["W"])


def test_a_projection_weighs_the_whole_result_and_its_scale() -> None:
    from types import SimpleNamespace as Namespace

    from grader.probes.backends import make_backend
    from grader.probes.library import Weights, projection

    api = Namespace(backend=make_backend("numpy"), flavor="numpy")
    weights = Weights(3)
    value = np.array([[1.0, -2.0], [3.0, 4.0]])
    signed, absolute = weights(4)
    assert projection(api, value, weights) == pytest.approx(
        [float(value.ravel() @ signed), float(np.abs(value.ravel()) @ np.abs(signed))])
    tree, flat = [value, value[0]], np.concatenate([value.ravel(), value[0]])
    assert projection(api, tree, weights) == pytest.approx(
        [float(flat @ weights(6)[0]), float(np.abs(flat) @ weights(6)[1])])
    assert projection(api, "not arrays", weights) is None


def test_a_cost_below_zero_within_noise_reads_as_none() -> None:
    """The reference graded as a candidate: its call at the large size can cost a little less
    than its call at the tiny size, within a process's noise; the message says 0.0x, not a
    negative multiple."""
    from grader.checks.kinds import _times

    assert [_times(r) for r in (-0.4, 0.0, 2.34, None)] == [
        "0.0x", "0.0x", "2.3x", "an unmeasurable share of"]


def _timed_case_makers() -> list[tuple[str, Any]]:
    """(round and check, the check's case maker) of every cpu_growth row of every round."""
    import tomllib

    from grader.engine.rounds import installed, load_module

    found = []
    for round_ in installed().values():
        table = tomllib.loads((round_.folder / "checks.toml").read_text())
        judge = load_module(round_, "checks")
        found += [(f"{round_.id} {row['id']}", getattr(judge, row["cases"]))
                  for row in table.get("check", []) if row.get("kind") == "cpu_growth"]
    return found


@pytest.mark.parametrize(("check", "maker"), _timed_case_makers())
def test_the_sizes_a_timed_check_holds_still_cannot_be_told_from_their_numbers(
        check: str, maker: Any) -> None:
    """Every size of a timed run is drawn from the run's seed, those held still as the others
    grow too (held_size): the smallest run's shapes, where only those vary, differ from seed
    to seed, so code cannot run one algorithm where it is measured and another elsewhere."""
    shapes = {tuple(np.shape(v) for v in maker(np.random.default_rng(seed))[0].inputs.values())
              for seed in range(16)}
    assert len(shapes) >= 3, (check, shapes)
