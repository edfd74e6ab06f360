"""Which failures to show, and in what order: root causes first, the rest folded under them.

A candidate with twenty minutes left needs the one hint that names their mistake, not every
check that tripped over it. So the failures of a run are sorted into
- parts that are still the stub (one "start here" for the first of them),
- parts that never ran (an import error or a hang at import: one trouble for the part),
- troubles: a root failure and the failures it explains (a check whose `after` names a failed
  check follows from it; checks not run after a hang follow from the hang),
in the order the candidate works: part order (part1 first), then the part's check order, so
the panels read like the tables above them. Of these, `first` is the root most likely to be the
mistake to fix first: in the earliest failing part, the values before the properties, both
before validation, then the heaviest. Plain data; report.py draws it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from grader.engine.results import CheckResult, PartResult, RunResult

FAILING = ("failed", "error", "timeout")


@dataclass(frozen=True)
class Trouble:
    """One root failure and the failures that follow from it."""

    part: PartResult
    root: CheckResult
    follows: tuple[CheckResult, ...] = ()
    whole_part: bool = False  # the part never ran: its every check failed for this one reason


@dataclass(frozen=True)
class Triage:
    untouched: tuple[PartResult, ...] = ()
    troubles: tuple[Trouble, ...] = ()
    follows_from: dict[str, str] = field(default_factory=dict)

    @property
    def first(self) -> Trouble | None:
        """The root most likely to be the mistake (see the module's docstring); among equals,
        the earliest in check order."""
        if not self.troubles:
            return None
        part = self.troubles[0].part
        return min((t for t in self.troubles if t.part is part),
                   key=lambda t: (-t.root.rank, -t.root.max_score))


def _untouched(part: PartResult) -> bool:
    return bool(part.checks) and all(c.not_implemented for c in part.checks)


def _never_ran(part: PartResult) -> CheckResult | None:
    """The one reason a part did not run at all: an import that failed or hung."""
    failing = [c for c in part.checks if c.status in FAILING]
    if not failing or any(c.status == "passed" for c in part.checks):
        return None
    first = part.checks[0]
    if first.status == "error" and all(c.status == "error" and c.message == first.message
                                       for c in part.checks):
        return first
    if first.status == "timeout" and all(c.status == "skipped" for c in part.checks[1:]) \
            and first.message.startswith("importing "):
        return first
    return None


def follows_from(after: Iterable[str], status: Mapping[str, str]) -> str | None:
    """The first of the checks a failure's row names in `after` (CheckResult.after: empty for
    a verdict that stands alone) that failed, by check id -> status: the failure follows from
    it and is folded under it; None for a root failure."""
    return next((a for a in after if status.get(a) in FAILING), None)


def root_of(check_id: str, parent: Mapping[str, str]) -> str:
    """The root of a folded failure's chain (see folded_under)."""
    while check_id in parent:
        check_id = parent[check_id]
    return check_id


def _fold(parent: dict[str, str], check_id: str, cause: str) -> None:
    """Fold check_id under cause, unless cause's chain leads back to check_id: two failures
    each named in the other's `after` (a check that voided another's values, whose own row
    says it follows from them) would fold into a loop with no root; the first met stays one."""
    if root_of(cause, parent) != check_id:
        parent[check_id] = cause


def folded_under(checks: Iterable[CheckResult]) -> dict[str, str]:
    """Each failure's parent, the failure it follows from (follows_from), in the checks'
    order: a forest, whose roots are the failures that stand alone."""
    checks = list(checks)
    status = {c.id: c.status for c in checks}
    parent: dict[str, str] = {}
    for check in checks:
        cause = follows_from(check.after, status) if check.status in FAILING else None
        if cause is not None:
            _fold(parent, check.id, cause)
    return parent


def _roots(part: PartResult) -> tuple[list[CheckResult], dict[str, str]]:
    """The part's root failures (in registration order) and, for each folded failure, the
    root it follows from; the checks a hang kept from running fold under it."""
    parent = folded_under(part.checks)
    hung: str | None = None
    for check in part.checks:
        if check.status == "skipped" and hung and check.message.startswith("not run:"):
            _fold(parent, check.id, hung)
        elif check.status == "timeout":
            hung = check.id
    roots = [c for c in part.checks if c.status in FAILING and c.id not in parent]
    return roots, {child: root_of(child, parent) for child in parent}


def triage(result: RunResult) -> Triage:
    untouched = tuple(p for p in result.parts if _untouched(p))
    troubles: list[Trouble] = []
    follows_from: dict[str, str] = {}
    for part in result.parts:
        if part in untouched:
            continue
        blocker = _never_ran(part)
        if blocker is not None:
            others = tuple(c for c in part.checks if c is not blocker)
            troubles.append(Trouble(part, blocker, others, whole_part=True))
            follows_from.update({c.id: blocker.id for c in others})
            continue
        roots, folded = _roots(part)
        follows_from.update(folded)
        troubles += [Trouble(part, root, tuple(c for c in part.checks
                                               if folded.get(c.id) == root.id))
                     for root in roots]
    return Triage(untouched, tuple(troubles), follows_from)
