"""Known wrong answers, so a failing check can name the mistake instead of only showing numbers.

A round's checks.py defines, for each known slip, a function that recomputes what the slip
produces (in float64, from the same case); its checks.toml gives each slip its hint and lists
which slips each check looks for. When the candidate's outputs match one of them, its hint is
the diagnosis (see `diagnose`). Order matters on ties, so the most specific slips come first.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from grader.checks.cases import Case
from grader.checks.compare import tree_matches

Reproduces = Callable[[Case, Any], bool]


@dataclass(frozen=True)
class Mistake:
    name: str
    reproduces: Reproduces
    hint: str


def same_as(output: Callable[[Case], Any]) -> Reproduces:
    """A matcher: the candidate's result equals what this slip computes on the same case."""

    def reproduces(case: Case, actual: Any) -> bool:
        return tree_matches(actual, output(case), case.dtype, alike=True)

    return reproduces


def diagnose(wrong: Sequence[tuple[Case, Any]], mistakes: Sequence[Mistake]) -> str | None:
    """The hint of the known mistake that reproduces most of the wrong outputs, if it explains
    more than half of them (ties go to the earlier, more specific one).

    One case alone can mislead: at N = 1 a P that was never written and a P whose first slot
    was skipped look the same, so the verdict is taken over every case that came out wrong.
    """
    best, best_count = None, 0
    for mistake in mistakes:
        # Counting stops where this mistake can no longer explain more than half of them, or
        # more than the best so far: what is left to count could not make it the answer.
        needed = max(best_count, len(wrong) // 2) + 1
        count = 0
        for seen, (case, actual) in enumerate(wrong):
            if count + len(wrong) - seen < needed:
                break
            count += _reproduces(mistake, case, actual)
        if count >= needed:
            best, best_count = mistake, count
    return best.hint if best is not None else None


def _reproduces(mistake: Mistake, case: Case, actual: Any) -> bool:
    """A reproducer that cannot even run on a case (a wrong shape, say) does not match it."""
    try:
        return bool(mistake.reproduces(case, actual))
    except (ValueError, IndexError, TypeError, FloatingPointError):
        return False
