"""The shape of a hidden check: a plan made in the grader, a probe run in the child, a verdict.

A check is one function `plan(ctx) -> Plan`, registered with `@check(...)`. It runs in the
worker (a process where no candidate code ever ran), builds its inputs and expected values,
and returns two closures: `probe`, which the runner executes in a forked child that has imported
the candidate's file, and which returns plain data (numbers, strings, numpy arrays); and
`judge`, which turns that data into a Verdict back in the worker. Keeping every comparison in
`judge` is what makes a monkeypatched `numpy.allclose` in an exercise file prove nothing.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

from grader.parts import FLAVORS

if TYPE_CHECKING:
    from grader.checks.api import Api

VerdictStatus = Literal["passed", "failed", "skipped"]


@dataclass(frozen=True)
class Verdict:
    """What the judge decided. `fraction` is the share of the points earned."""

    status: VerdictStatus
    message: str = ""
    hint: str | None = None
    fraction: float = 0.0
    not_applicable: bool = False


def passed(message: str = "") -> Verdict:
    return Verdict("passed", message, None, 1.0)


def failed(message: str, hint: str | None = None, fraction: float = 0.0) -> Verdict:
    return Verdict("failed", message, hint, fraction)


def skipped(message: str, not_applicable: bool = False) -> Verdict:
    """A check that did not run to a verdict. `not_applicable`: it cannot apply on this machine
    at all (GPU timing without a GPU), so it is worth no points here; otherwise (the candidate's
    code hid what the check measures) it keeps its points and earns none: a skip is no pass."""
    return Verdict("skipped", message, None, 0.0, not_applicable)


@dataclass(frozen=True)
class Plan:
    """The two halves of a check: `probe` runs candidate code, `judge` decides.

    `uses_device`: the probe may initialise CUDA. The runner then lifts the address-space cap
    for it (CUDA reserves far more virtual memory than any cap would allow, and cuInit fails
    under one) and allows it time to set the device up on top of the check's timeout.
    """

    probe: Callable[[Api], Any]
    judge: Callable[[Any], Verdict]
    uses_device: bool = False


@dataclass(frozen=True)
class Context:
    """What a plan may know: the run's seed and flavor, and its own check id."""

    seed: int
    flavor: str
    check_id: str
    device: str = "auto"
    timeout_s: float = 10.0

    def rng(self) -> np.random.Generator:
        """A generator private to this check, so adding a check never shifts another's inputs."""
        return np.random.default_rng([self.seed, zlib.crc32(self.check_id.encode())])


@dataclass(frozen=True)
class Check:
    """A registered hidden check."""

    id: str
    title: str
    points: float
    plan: Callable[[Context], Plan]
    flavors: tuple[str, ...]

    @property
    def part_id(self) -> str:
        return self.id.split(".", 1)[0]


REGISTRY: list[Check] = []


def check(
    check_id: str, title: str, points: float, flavors: tuple[str, ...] = FLAVORS
) -> Callable[[Callable[[Context], Plan]], Callable[[Context], Plan]]:
    """Register a plan function as a hidden check; registration order is run order."""

    def register(plan: Callable[[Context], Plan]) -> Callable[[Context], Plan]:
        if any(c.id == check_id for c in REGISTRY):
            raise ValueError(f"duplicate check id {check_id}")
        REGISTRY.append(Check(check_id, title, points, plan, flavors))
        return plan

    return register
