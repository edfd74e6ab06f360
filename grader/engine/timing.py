"""Timing that a performance engineer would trust: warm-up, a synchronised clock, many repeats,
median and spread, outliers counted rather than hidden.

The clock, the device synchronisation and the cache flush are injected, so the statistics are
tested with a fake clock and the CUDA path (CUDA events, torch.cuda.synchronize, an L2 flush as
triton's do_bench does) shares all its logic with the CPU path. No torch import at module level.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

Clock = Callable[[], float]


@dataclass(frozen=True)
class TimingStats:
    """Summary of repeated timings, in seconds."""

    median: float
    q1: float
    q3: float
    minimum: float
    maximum: float
    repeats: int
    outliers: int

    @property
    def spread(self) -> float:
        """Interquartile range relative to the median (0.05 = ±5%)."""
        return (self.q3 - self.q1) / self.median if self.median > 0 else 0.0

    def as_dict(self) -> dict[str, float]:
        return {"median": self.median, "q1": self.q1, "q3": self.q3, "min": self.minimum,
                "max": self.maximum, "repeats": self.repeats, "outliers": self.outliers}


NOISY_SPREAD = 0.5
"""Past a half interquartile range of this fraction of the median, the timings disagree too much
for a "±" to mean anything (a busy machine, or a call near the clock's resolution)."""


def spread_text(stats: Mapping[str, float]) -> str:
    """The "±5%" shown beside a median (`stats` as TimingStats.as_dict gives it), or, past
    NOISY_SPREAD, a plain statement that the run was too noisy: a "±573%" reads as a measurement
    when it is only noise. Every timing shown to a reader goes through here."""
    half = (stats["q3"] - stats["q1"]) / 2
    if stats["median"] <= 0 or half > NOISY_SPREAD * stats["median"]:
        return "too noisy to state a spread"
    return f"±{half / stats['median'] * 100:.0f}%"


def summarize(samples: list[float]) -> TimingStats:
    """Median and quartiles; samples beyond 1.5 IQR from the quartiles are counted as
    outliers (kept in min/max, not in the median, which they barely move anyway)."""
    if not samples:
        raise ValueError("no timing samples")
    ordered = sorted(samples)
    if len(ordered) >= 2:
        q1, _, q3 = statistics.quantiles(ordered, n=4, method="inclusive")
    else:
        q1 = q3 = ordered[0]
    fence = 1.5 * (q3 - q1)
    outliers = sum(1 for s in ordered if s < q1 - fence or s > q3 + fence)
    return TimingStats(statistics.median(ordered), q1, q3, ordered[0], ordered[-1],
                       len(ordered), outliers)


@dataclass
class Stopwatch:
    """Times one call: flush caches, synchronise, read the clock, run, synchronise, read."""

    clock: Clock = time.perf_counter
    sync: Callable[[], None] = lambda: None
    flush: Callable[[], None] = lambda: None

    def time_once(self, fn: Callable[[], Any]) -> float:
        self.flush()
        self.sync()
        start = self.clock()
        fn()
        self.sync()
        return self.clock() - start


class CudaStopwatch(Stopwatch):
    """CUDA events around the call (device time, no host jitter) after an L2 flush."""

    def __init__(self, torch: Any, flush_bytes: int = 256 * 1024 * 1024) -> None:
        cache = torch.empty(flush_bytes // 4, dtype=torch.float32, device="cuda")
        super().__init__(sync=torch.cuda.synchronize, flush=cache.zero_)
        self.torch = torch

    def time_once(self, fn: Callable[[], Any]) -> float:
        self.flush()
        start = self.torch.cuda.Event(enable_timing=True)
        end = self.torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        self.torch.cuda.synchronize()
        return float(start.elapsed_time(end)) / 1e3


class TooSlow(Exception):
    """One call took longer than the measurement may spend; carries that call's time."""

    def __init__(self, seconds: float) -> None:
        super().__init__(f"one call took {seconds:.2f} s")
        self.seconds = seconds


def measure(fn: Callable[[], Any], stopwatch: Stopwatch, *, warmup: int = 2,
            min_repeats: int = 5, max_repeats: int = 50, budget_s: float = 0.5,
            call_limit_s: float | None = None, deadline: float | None = None,
            clock: Clock | None = None) -> TimingStats:
    """Warm up, then repeat until both min_repeats and the time budget are reached (or
    max_repeats).

    A warm-up call slower than call_limit_s raises TooSlow instead of hanging. Past `deadline`
    (a reading of `clock`) no new repeat starts once one sample is in: a slow function gets
    fewer samples, and the run as a whole stays inside its time limit.
    """
    clock = clock or stopwatch.clock
    for _ in range(max(1, warmup)):
        seconds = stopwatch.time_once(fn)
        if call_limit_s is not None and seconds > call_limit_s:
            raise TooSlow(seconds)
    samples: list[float] = []
    began = clock()
    while len(samples) < max_repeats and (
        len(samples) < min_repeats or clock() - began < budget_s
    ):
        if samples and deadline is not None and clock() >= deadline:
            break
        samples.append(stopwatch.time_once(fn))
    return summarize(samples)


M_TRIM_THRESHOLD, M_MMAP_THRESHOLD = -1, -3  # glibc's mallopt parameters
STEADY_MMAP_THRESHOLD = 64 * 1024 * 1024


def steady_host_allocator() -> bool:
    """Keep freed tensor buffers in glibc's heap instead of unmapping them.

    glibc serves large allocations with fresh mmaps until a free raises its dynamic threshold,
    and trims the heap back to the OS; which regime a process is in depends on its history, so
    the same CPU code timed in two processes differed 2-3x (page faults on every new level).
    Fixing both thresholds makes CPU figures repeatable. False where there is no glibc."""
    import ctypes

    try:
        libc = ctypes.CDLL(None)
        return bool(libc.mallopt(M_MMAP_THRESHOLD, STEADY_MMAP_THRESHOLD)
                    and libc.mallopt(M_TRIM_THRESHOLD, 2 * STEADY_MMAP_THRESHOLD))
    except (OSError, AttributeError):
        return False


def scan_flops(n: int, d: int) -> int:
    """Multiply-adds x2 of the Hillis-Steele forward: each level multiplies N - step pairs."""
    flops, step = 0, 1
    while step < n:
        flops += 2 * d**3 * (n - step)
        step *= 2
    return flops
