"""Helpers for the rehearsal tests: workspaces with chosen exercise files, synthetic results and
a fake clock. Kept out of conftest.py so the core's test suite can own that file."""

from __future__ import annotations

import shutil
from pathlib import Path

from grader.engine.results import CheckResult, PartResult, RunResult
from grader.engine.workspace import Workspace, init_workspace, load_workspace

from helpers import PREFIX

T0 = 1_700_000_000.0  # the fake clock's start (any epoch second works)


class FakeClock:
    """A clock that moves only when told to: `clock.at(300)` is the round's 5th minute."""

    def __init__(self, start: float = T0) -> None:
        self.start = start
        self.now = start

    def __call__(self) -> float:
        return self.now

    def at(self, seconds: float) -> float:
        self.now = self.start + seconds
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


def make_workspace(root: Path, flavor: str = "torch", solved: tuple[str, ...] = (),
                   config: str = "") -> Workspace:
    """A fresh workspace, with the reference solution copied in for each part in `solved`."""
    init_workspace(root, flavor)
    for part_id in solved:
        use_reference(root, part_id, flavor)
    if config:
        with open(root / "grader.toml", "a") as handle:
            handle.write(config)
    return load_workspace(root)


def use_reference(root: Path, part_id: str, flavor: str = "torch") -> None:
    part = PREFIX.part(part_id)
    shutil.copy(PREFIX.reference_file(part, flavor), root / "exercises" / part.file)


def edit(workspace: Workspace, part_id: str, text: str) -> None:
    """Give a part's exercise file new content (a new attempt, as far as a round can tell)."""
    workspace.part_file(PREFIX.part(part_id)).write_text(text)


def result(*parts: tuple[str, float, bool]) -> RunResult:
    """A run with one check per part: (part id, score, passed). The part's weight is taken from
    the registry so max_score matches the round's weights."""
    run = RunResult(round="prefix-products", flavor="torch", seed=1)
    for part_id, score, passed in parts:
        part = PREFIX.part(part_id)
        check = CheckResult(id=f"{part_id}.all", title="everything",
                            status="passed" if passed else "failed", score=score,
                            max_score=part.weight)
        run.parts.append(PartResult(id=part_id, title=part.title, checks=[check]))
    return run
