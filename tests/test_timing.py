"""The timing method, driven by a fake clock: warm-up, repeats, budget, statistics, limits."""

from __future__ import annotations

import pytest

from grader.engine.timing import (
    CudaStopwatch,
    Stopwatch,
    TooSlow,
    measure,
    scan_flops,
    spread_text,
    summarize,
)


class FakeClock:
    """A clock that each timed call advances by the next scripted duration."""

    def __init__(self, durations: list[float]) -> None:
        self.now = 0.0
        self.durations = list(durations)
        self.calls = 0
        self.syncs = 0
        self.flushes = 0

    def __call__(self) -> float:
        return self.now

    def work(self) -> None:
        self.calls += 1
        self.now += self.durations.pop(0) if self.durations else 0.001

    def stopwatch(self) -> Stopwatch:
        return Stopwatch(clock=self, sync=self._sync, flush=self._flush)

    def _sync(self) -> None:
        self.syncs += 1

    def _flush(self) -> None:
        self.flushes += 1


def test_summary_median_quartiles_and_outliers() -> None:
    stats = summarize([1.0, 1.1, 0.9, 1.0, 1.05, 0.95, 9.0])
    assert stats.median == 1.0
    assert stats.minimum == 0.9 and stats.maximum == 9.0
    assert stats.repeats == 7
    assert stats.outliers == 1
    assert stats.q1 == pytest.approx(0.975) and stats.q3 == pytest.approx(1.075)
    assert stats.spread == pytest.approx(0.1)


def test_summary_of_one_sample_and_of_none() -> None:
    one = summarize([0.5])
    assert (one.median, one.q1, one.q3, one.outliers) == (0.5, 0.5, 0.5, 0)
    with pytest.raises(ValueError):
        summarize([])


def test_warmup_is_discarded_and_every_call_is_synchronised_and_flushed() -> None:
    clock = FakeClock([5.0, 5.0] + [0.01] * 10)  # two slow warm-up calls (compilation, caches)
    stats = measure(clock.work, clock.stopwatch(), warmup=2, min_repeats=10, max_repeats=10,
                    budget_s=0.0)
    assert stats.repeats == 10
    assert stats.maximum == pytest.approx(0.01)
    assert clock.calls == 12
    assert clock.syncs == 2 * 12  # before and after every call
    assert clock.flushes == 12


def test_repeats_continue_until_the_budget_then_stop_at_max() -> None:
    clock = FakeClock([0.125] * 100)
    stats = measure(clock.work, clock.stopwatch(), warmup=1, min_repeats=3, max_repeats=50,
                    budget_s=1.0)
    assert stats.repeats == 8  # 1 s of budget at 0.125 s a call
    capped = FakeClock([0.001] * 100)
    assert measure(capped.work, capped.stopwatch(), warmup=1, min_repeats=3, max_repeats=20,
                   budget_s=10.0).repeats == 20


def test_a_call_over_the_limit_stops_before_repeating() -> None:
    clock = FakeClock([3.0])
    with pytest.raises(TooSlow) as caught:
        measure(clock.work, clock.stopwatch(), call_limit_s=1.0)
    assert caught.value.seconds == pytest.approx(3.0)
    assert clock.calls == 1


def test_scan_flops_counts_each_level() -> None:
    # N = 5: levels at step 1, 2, 4 multiply 4, 3 and 1 pairs of D x D matrices.
    assert scan_flops(5, 2) == 2 * 8 * (4 + 3 + 1)
    assert scan_flops(1, 3) == 0


def test_a_slow_warm_up_call_stops_too() -> None:
    clock = FakeClock([0.1, 2.5])  # the first call is fine, the second blows the limit
    with pytest.raises(TooSlow):
        measure(clock.work, clock.stopwatch(), warmup=2, call_limit_s=1.0)
    assert clock.calls == 2


def test_past_the_deadline_no_new_repeat_starts_once_one_sample_is_in() -> None:
    clock = FakeClock([0.5] * 100)
    stats = measure(clock.work, clock.stopwatch(), warmup=2, min_repeats=5, budget_s=10.0,
                    deadline=1.2)
    # warm-up ends at 1.0 s; the first sample (to 1.5 s) always runs, then the deadline holds
    assert stats.repeats == 1
    assert clock.calls == 3
    late = FakeClock([0.5] * 100)
    assert measure(late.work, late.stopwatch(), warmup=1, min_repeats=3, budget_s=0.0,
                   deadline=0.0).repeats == 1
    roomy = FakeClock([0.5] * 100)
    assert measure(roomy.work, roomy.stopwatch(), warmup=1, min_repeats=3, budget_s=0.0,
                   deadline=100.0).repeats == 3


class FakeCudaTorch:
    """Just enough of torch for CudaStopwatch, logging what happens in which order."""

    float32 = "float32"

    def __init__(self, elapsed_ms: float) -> None:
        self.log: list[str] = []
        torch = self

        class Event:
            def __init__(self, enable_timing: bool) -> None:
                assert enable_timing

            def record(self) -> None:
                torch.log.append("record")

            def elapsed_time(self, end: Event) -> float:
                torch.log.append("elapsed")
                return elapsed_ms

        class Buffer:
            def zero_(self) -> None:
                torch.log.append("flush")

        class Cuda:
            pass

        self.cuda = Cuda()
        self.cuda.Event = Event  # type: ignore[attr-defined]
        self.cuda.synchronize = lambda: self.log.append("sync")  # type: ignore[attr-defined]
        self._buffer = Buffer

    def empty(self, n: int, dtype: str, device: str) -> object:
        assert device == "cuda" and dtype == "float32" and n == 256 * 1024 * 1024 // 4
        return self._buffer()


def test_cuda_stopwatch_flushes_then_reads_events_only_after_synchronising() -> None:
    torch = FakeCudaTorch(elapsed_ms=2.5)
    stopwatch = CudaStopwatch(torch)
    seconds = stopwatch.time_once(lambda: torch.log.append("work"))
    assert seconds == pytest.approx(2.5e-3)  # events report milliseconds
    assert torch.log == ["flush", "record", "work", "record", "sync", "elapsed"]


@pytest.mark.parametrize(("q1", "q3", "median", "text"), [
    (0.95, 1.05, 1.0, "±5%"),
    (0.5, 1.5, 1.0, "±50%"),                      # the threshold itself is still a spread
    (0.5, 1.52, 1.0, "too noisy to state a spread"),
    (0.2, 11.66, 1.0, "too noisy to state a spread"),   # issue 24's "±573%"
    (0.0, 0.0, 0.0, "too noisy to state a spread"),     # below the clock's resolution
])
def test_a_spread_is_stated_only_while_the_timings_agree(q1: float, q3: float, median: float,
                                                           text: str) -> None:
    assert spread_text({"q1": q1, "q3": q3, "median": median}) == text
