"""The hidden checks, one module per part; importing this package registers them all."""

from __future__ import annotations

from grader.checks import part1, part2, part3, part4  # noqa: F401 - registration
from grader.checks.base import REGISTRY, Check


def checks_for(part_id: str, flavor: str) -> list[Check]:
    """The checks of one part that apply to a flavor, in run order."""
    return [c for c in REGISTRY if c.part_id == part_id and flavor in c.flavors]


def scaled_points(checks: list[Check], weight: float) -> list[float]:
    """Share a part's weight among its checks in proportion to their points."""
    total = sum(c.points for c in checks) or 1.0
    return [weight * c.points / total for c in checks]
