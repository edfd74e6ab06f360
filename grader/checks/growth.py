"""How fast a cost grows, from CPU times the kernel charged whole processes (read by their
parent), so that no counter inside the candidate's process has to be believed.

One process per size: a tiny one, a middle one and a large one. A candidate's process is
charged from the moment its file is imported (the parent reads its CPU time then and at the
end: a file that imports scipy or builds a table pays that in every process, and it is no work
of the calls). Every process pays the same constant besides (the fork, building the inputs,
each call's fixed costs), so the tiny run's time is subtracted from the others: what is left is
the work that grows with the size. The candidate's growth from the middle size to the large one
is compared with the reference's, measured the same way in the same grading, so that whatever
the machine does to CPU time (a loaded neighbour, a slower clock) it does to both.

Timing noise is a few milliseconds a process on a loaded machine, not far below the work at the
middle size (and now and then one process is charged tens of milliseconds more), so two rules
keep it from reading as growth (a false failure is as bad as a missed mistake):
- the reference's growth counts as measured, but between 1/FLOOR and CEILING times the expected
  order's own growth at these sizes (below it, by up to a third: the reference's work has a
  part that does not grow, which honest code shares; above it, by up to three quarters: a
  step costs more once the arrays outgrow the caches, for honest code too): outside
  that band, it is noise (a slow middle-size process, which would make the right order look fast,
  or a slow tiny-size one, which would let the wrong order pass); its work at the middle size
  is then the one its growth implies from the large size;
- the candidate's work at the middle size counts as at least half the reference's there
  (FLOOR_SHARE): a run whose tiny-size process happened to be slow, which shrinks both its
  differences, cannot then multiply its growth, nor can a candidate much faster than the
  reference, whose work there is close to the noise.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

CEILING = 1.75
"""How much faster than the expected order's the reference's growth may count: its work per
step grows with the size too, once its arrays outgrow the caches (at prefix-products' large
size, D = 32, its measured growth is 1.25 to 1.6 times linear growth, and honest code's alike);
past that, it is noise."""
FLOOR = 1.5
"""How many times slower than the expected order's the reference's growth may count: its work
has a part that does not grow with the size (per call, beyond the tiny run's), which makes it
grow about a quarter slower than the order itself at the prefix-products sizes."""
FLOOR_SHARE = 0.5
"""The least share of the reference's work at the middle size that the candidate's counts as.
With growth g from the middle size to the large one (6.7 for linear work at N = 1, 8, 48), a
tiny-size process slowed by any amount takes a reference-like candidate's measured growth at
most to (g - 1 + FLOOR_SHARE) / FLOOR_SHARE = 1.85 g, within the cpu_growth kind's default
limit of 2.5 g."""


@dataclass(frozen=True)
class Timings:
    """CPU seconds of the processes: at the tiny size and the middle one, each making
    `middle_calls` calls; at the tiny size again (`tiny_large`, when measured) and the large
    one, each making `large_calls`. The middle size makes more calls than the large one, so
    that its work stands well above a process's noise while the large one's stays cheap."""

    tiny: float
    middle: float
    large: float
    tiny_large: float | None = None
    middle_calls: int = 1
    large_calls: int = 1

    def work(self) -> tuple[float, float]:
        """(middle, large): what one call costs beyond a call at the tiny size."""
        base = self.tiny if self.tiny_large is None else self.tiny_large
        return ((self.middle - self.tiny) / self.middle_calls,
                (self.large - base) / self.large_calls)


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
    growth = (min(max(large / middle, expected / FLOOR), CEILING * expected) if middle > 0
              else expected)
    floor = FLOOR_SHARE * large / growth
    mine_middle, mine_large = (max(w, floor) for w in yours.work())
    return Growth(mine_large / mine_middle, growth)


def held_size(rng: np.random.Generator, near: int) -> int:
    """A size a cpu_growth check holds still while another grows (a matrix's side, a number of
    classes), drawn from the run's seed within an eighth of `near`: like the sizes that grow,
    it cannot be told from its number, so code cannot run one algorithm where it is measured
    and another everywhere else (`if D == 32:`)."""
    spread = max(1, near // 8)
    return int(rng.integers(near - spread, near + spread + 1))


def backward_sizes(rng: np.random.Generator, smallest: int = 1) -> tuple[int, int, int]:
    """The three sizes of a cpu_growth check on a backward whose work grows like one axis (a
    batch, a hidden width, a row count): `smallest` (what every run pays whatever the size; a
    batch norm needs two examples), then a middle and a large one drawn from the run's seed
    (64 to 80, 1500 to 1800), so that code cannot tell the measured sizes from their numbers.

    The large size is about 20 to 28 times the middle one. A backward by hand costs a few
    forwards' work, which grows like the size; a gradient made from forwards, one per input
    entry (finite differences, a dual number per entry), makes as many forwards as there are
    entries, so its work grows like the size squared: from the middle size to the large one,
    about 20 times faster than the reference's, against the 5x these checks allow."""
    return smallest, int(rng.integers(64, 81)), int(rng.integers(1500, 1801))
