"""How fast a cost grows, from CPU times the kernel charged whole processes (read by their
parent), so that no counter inside the candidate's process has to be believed.

One process per size: a tiny one, a middle one and a large one. Every process pays the same
constant (the fork, importing the candidate's file, building the inputs, each call's fixed
costs), so the tiny run's time is subtracted from the others: what is left is the work that
grows with the size. The candidate's growth from the middle size to the large one is compared
with the reference's, measured the same way in the same grading, so that whatever the machine
does to CPU time (a loaded neighbour, a slower clock) it does to both.

Timing noise is a few milliseconds a process on a loaded machine, not far below the work at the
middle size (and now and then one process is charged tens of milliseconds more), so two rules
keep it from reading as growth (a false failure is as bad as a missed mistake):
- the reference's growth counts as that of the expected order itself at these sizes, or as
  much as a quarter more (CEILING) when it measured more: the reference is of that order, so a
  measured growth below it is noise (a slow middle-size process) that would make the right
  order look fast, and one far above it is noise too (a slow tiny-size process) that would let
  the wrong order pass; its work at the middle size is then the one its growth implies from
  the large size;
- the candidate's work at the middle size counts as at least half the reference's there
  (FLOOR_SHARE): a run whose tiny-size process happened to be slow, which shrinks both its
  differences, cannot then multiply its growth, nor can a candidate much faster than the
  reference, whose work there is close to the noise.
"""

from __future__ import annotations

from dataclasses import dataclass

CEILING = 1.25
"""How much faster than the expected order's the reference's growth may count: on a loaded
machine its measured growth stays within a quarter of the expected order's but in a few runs in
a hundred."""
FLOOR_SHARE = 0.5
"""The least share of the reference's work at the middle size that the candidate's counts as.
With growth g from the middle size to the large one (6.7 for linear work at N = 1, 8, 48), a
tiny-size process slowed by any amount takes a reference-like candidate's measured growth at
most to (g - 1 + FLOOR_SHARE) / FLOOR_SHARE = 1.85 g, within the cpu_growth kind's default
limit of 2.5 g."""


@dataclass(frozen=True)
class Timings:
    """CPU seconds of the three processes, at the tiny, the middle and the large size."""

    tiny: float
    middle: float
    large: float

    def work(self) -> tuple[float, float]:
        """(middle, large): what each costs beyond the tiny run."""
        return self.middle - self.tiny, self.large - self.tiny


@dataclass(frozen=True)
class Growth:
    """Both growths from the middle size to the large one, as judged, and their ratio."""

    yours: float
    reference: float

    @property
    def excess(self) -> float:
        """How many times faster yours grows than the reference's."""
        return self.yours / self.reference


def compare(yours: Timings, reference: Timings, expected: float) -> Growth | None:
    """The two growths (see the module's rules; `expected` is the expected order's own growth
    from the middle size to the large one); None when the reference's large size took no more
    than its tiny one, so that there is nothing to compare with."""
    middle, large = reference.work()
    if large <= 0:
        return None
    growth = min(max(large / middle, expected), CEILING * expected) if middle > 0 else expected
    floor = FLOOR_SHARE * large / growth
    mine_middle, mine_large = (max(w, floor) for w in yours.work())
    return Growth(mine_large / mine_middle, growth)
