"""The rounds the grader hosts: each one a folder of data (round.toml, checks.toml, stubs,
topics, follow-ups) plus a judge module (checks.py) and a probe module (probes.py).

This module only reads TOML and lists files, so `grader list`, `grader hint` and `grader rounds`
stay instant; the check table and the round's code are loaded by the worker (grader.checks.table).

A round folder:

    round.toml          id, title, summary, flavors, minutes, [[parts]] (id, title, file,
                        functions, weight, budget, hints, flavors)
    checks.toml         the check table ([[check]]), the known mistakes and their hints
    checks.py           judge side: truth, input makers, mistake reproducers, special judges
    probes.py           candidate side: argument builders, result readers, special probes
    stubs/<flavor>/     the pristine exercise files
    topics/*.md         `grader explain` topics (fenced python blocks are live demonstrations)
    followups/*.md      the interviewer's follow-up question and model answer per part

References live at the repo's top level, `reference/<round id>/<flavor>/` (shipped inside the
package), or in the round folder's own `reference/<flavor>/`.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import re
import sys
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from types import ModuleType
from typing import Any

from grader.engine.documents import Unreadable, read_document, toml_document
from grader.engine.flavored import problems
from grader.engine.results import in_eighths

DEFAULT_ROUND = "prefix-products"
EXTRA_ROUNDS_ENV = "GRADER_ROUNDS_PATH"
"""Extra round folders (or folders of round folders), separated like PATH: a coach's own rounds,
and the test suite's throwaway ones."""

ROUNDS_DIR = Path(__file__).resolve().parents[1] / "rounds"
"""The installed rounds: every folder here with a round.toml (and its references under
reference/<id>/). Adding a round is adding its folder."""
ROUND_FILE = "round.toml"
LAST = 1000
"""The `order` of a round whose round.toml gives none: after the installed ones."""
HINT_NAMES = ("nudge", "approach", "near-solution")


class RoundError(Exception):
    """A round that cannot be found or whose data is malformed; the message names the file."""


@dataclass(frozen=True)
class Part:
    """One exercise file of a round."""

    id: str
    title: str
    file: str
    functions: tuple[str, ...]
    weight: float
    budget_minutes: float
    hints: tuple[str, ...]
    flavors: tuple[str, ...]

    @property
    def module(self) -> str:
        return self.file.removesuffix(".py")

    def hint_name(self, index: int) -> str:
        """nudge, approach, near-solution, then "one more" for any further hint."""
        return HINT_NAMES[index] if index < len(HINT_NAMES) else "one more"


@dataclass(frozen=True)
class Round:
    """A round as its round.toml describes it, and where its files are."""

    id: str
    title: str
    summary: str
    flavors: tuple[str, ...]
    minutes: float
    parts: tuple[Part, ...]
    folder: Path
    candidate_modules: tuple[str, ...] = ()
    """Modules of the round folder that its probes import besides probes.py (round.toml's
    `candidate_modules`): with probes.py and round.toml, the only files of the round that
    candidate code can see in the sandbox. Everything else there is the judge's."""
    order: int = LAST
    """Where `grader rounds` lists it (round.toml's `order`; rounds of one order by id)."""

    @property
    def candidate_files(self) -> tuple[Path, ...]:
        """The round's files that the sandbox shows: round.toml, probes.py and the
        candidate_modules (see grader.runner.sandbox)."""
        names = (ROUND_FILE, "probes.py", *(f"{m}.py" for m in self.candidate_modules))
        return tuple(self.folder / name for name in names if (self.folder / name).is_file())

    @property
    def default_flavor(self) -> str:
        return self.flavors[0]

    @property
    def part_ids(self) -> tuple[str, ...]:
        return tuple(p.id for p in self.parts)

    def parts_for(self, flavor: str) -> tuple[Part, ...]:
        """The parts a workspace of this flavor has (a part may exist in one flavor only)."""
        return tuple(p for p in self.parts if flavor in p.flavors)

    def part(self, part_id: str) -> Part:
        for part in self.parts:
            if part.id == part_id:
                return part
        raise RoundError(f"round {self.id} has no part {part_id!r}; its parts: "
                         f"{', '.join(self.part_ids)}")

    def stubs_dir(self, flavor: str) -> Path:
        return self.folder / "stubs" / flavor

    def reference_dir(self, flavor: str) -> Path:
        """The round's own reference/ folder, else the bundled reference/<id>/."""
        own = self.folder / "reference" / flavor
        if own.is_dir():
            return own
        from grader.engine.bundle import bundled_path

        return bundled_path("reference") / self.id / flavor

    def reference_file(self, part: Part, flavor: str) -> Path:
        return self.reference_dir(flavor) / part.file

    @property
    def topics_dir(self) -> Path:
        return self.folder / "topics"

    @property
    def followups_dir(self) -> Path:
        return self.folder / "followups"

    def module_path(self, name: str) -> Path:
        """checks.py or probes.py of this round."""
        return self.folder / f"{name}.py"

    @classmethod
    def load(cls, folder: Path) -> Round:
        """Read and validate `folder`/round.toml; every mistake in it names the file."""
        path = folder / ROUND_FILE
        if not path.exists():
            raise RoundError(f"{folder} is not a round (no {ROUND_FILE})")
        try:
            data = read_document(path, toml_document)
        except Unreadable as exc:
            raise RoundError(f"{path}: {exc}") from exc
        return _parse_round(data, folder.resolve(), str(path))


def _require(data: dict[str, Any], key: str, kind: type | tuple[type, ...], where: str) -> Any:
    value = data.get(key)
    if value is None:
        raise RoundError(f"{where}: missing {key}")
    if not isinstance(value, kind) or isinstance(value, bool):
        raise RoundError(f"{where}: {key} has the wrong type ({type(value).__name__})")
    return value


def _strings(value: Any, where: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not value or not all(isinstance(v, str) for v in value):
        raise RoundError(f"{where} must be a non-empty list of strings")
    return tuple(value)


TABLE_KEYS = {"check", "mistakes", "catalogues", "defaults"}
"""The check table's own tables: in checks.toml, or, where a round has none, in round.toml."""
ROUND_KEYS = {"id", "title", "summary", "flavors", "minutes", "parts", "candidate_modules",
              "order"} | TABLE_KEYS
PART_KEYS = {"id", "title", "file", "functions", "weight", "budget", "hints", "flavors"}


def _parse_round(data: dict[str, Any], folder: Path, where: str) -> Round:
    unknown = sorted(set(data) - ROUND_KEYS)
    if unknown:
        raise RoundError(f"{where}: unknown key(s) {', '.join(unknown)}")
    flavors = _strings(data.get("flavors"), f"{where}: flavors")
    parts = []
    raw_parts = data.get("parts")
    if not isinstance(raw_parts, list) or not raw_parts:
        raise RoundError(f"{where}: a round needs at least one [[parts]] table")
    for index, raw in enumerate(raw_parts):
        here = f"{where}: parts[{index}]"
        unknown = sorted(set(raw) - PART_KEYS)
        if unknown:
            raise RoundError(f"{here}: unknown key(s) {', '.join(unknown)}")
        part_flavors = _strings(raw.get("flavors", list(flavors)), f"{here}.flavors")
        if set(part_flavors) - set(flavors):
            raise RoundError(f"{here}: flavors {part_flavors} not all among the round's")
        file = _require(raw, "file", str, here)
        if not file.endswith(".py") or "/" in file:
            raise RoundError(f"{here}: file must be a .py file name, got {file!r}")
        hints = _strings(raw.get("hints"), f"{here}.hints")
        wrong = [problem for hint in hints for problem in problems(hint, part_flavors, flavors)]
        if wrong:
            raise RoundError(f"{here}.hints: {wrong[0]}")
        parts.append(Part(
            id=_require(raw, "id", str, here), title=_require(raw, "title", str, here),
            file=file, functions=_strings(raw.get("functions"), f"{here}.functions"),
            weight=float(_require(raw, "weight", (int, float), here)),
            budget_minutes=float(_require(raw, "budget", (int, float), here)),
            hints=hints, flavors=part_flavors,
        ))
    uneven = [p.id for p in parts if not in_eighths(p.weight)]
    if uneven:
        raise RoundError(f"{where}: {uneven[0]}'s weight must be a multiple of 1/8: points "
                         "are kept in eighths, so that every output adds up")
    ids = [p.id for p in parts]
    if len(set(ids)) != len(ids):
        raise RoundError(f"{where}: part ids repeat: {ids}")
    return Round(
        id=_require(data, "id", str, where), title=_require(data, "title", str, where),
        summary=_require(data, "summary", str, where), flavors=flavors,
        minutes=float(_require(data, "minutes", (int, float), where)), parts=tuple(parts),
        folder=folder, candidate_modules=_module_names(data, where),
        order=int(_require(data, "order", int, where)) if "order" in data else LAST,
    )


def _module_names(data: dict[str, Any], where: str) -> tuple[str, ...]:
    if "candidate_modules" not in data:
        return ()
    names = _strings(data["candidate_modules"], f"{where}: candidate_modules")
    for name in names:
        if not name.isidentifier() or name in ("checks", "probes"):
            raise RoundError(f"{where}: candidate_modules: {name!r} is not the name of a module "
                             "of the round's own (checks is the judge's; probes is always shown)")
    return tuple(names)


def _extra_folders() -> list[Path]:
    """Round folders named by GRADER_ROUNDS_PATH: each entry a round, or a folder of them."""
    found = []
    for entry in os.environ.get(EXTRA_ROUNDS_ENV, "").split(os.pathsep):
        if not entry:
            continue
        folder = Path(entry)
        if (folder / ROUND_FILE).is_file():
            found.append(folder)
        elif folder.is_dir():
            found += sorted(p for p in folder.iterdir() if (p / ROUND_FILE).is_file())
    return found


@cache
def _all_rounds(extra: str) -> dict[str, Round]:
    rounds: dict[str, Round] = {}
    shipped = sorted(p for p in ROUNDS_DIR.iterdir() if (p / ROUND_FILE).is_file())
    for folder in shipped + _extra_folders():
        loaded = Round.load(folder)
        if loaded.id in rounds:
            raise RoundError(f"two rounds are called {loaded.id}: {rounds[loaded.id].folder} "
                             f"and {loaded.folder}")
        rounds[loaded.id] = loaded
    in_order = sorted(rounds.values(), key=lambda r: (r.order, r.id))
    return {r.id: r for r in in_order}


def installed() -> dict[str, Round]:
    """Every round by id: the installed ones, then those on GRADER_ROUNDS_PATH."""
    return _all_rounds(os.environ.get(EXTRA_ROUNDS_ENV, ""))


def get_round(round_id: str) -> Round:
    rounds = installed()
    if round_id not in rounds:
        raise RoundError(f"unknown round {round_id!r}; installed rounds: {', '.join(rounds)}")
    return rounds[round_id]


def module_name(round_: Round, name: str) -> str:
    """The module's name in sys.modules: its round's id and its folder's, so that two folders
    holding a round of the same id (a coach's edited copy beside the installed one) never share
    a module."""
    folder = hashlib.sha256(str(round_.folder.resolve()).encode()).hexdigest()[:12]
    return "grader_round_" + re.sub(r"\W", "_", round_.id) + f"_{folder}_{name}"


OPTIONAL_MODULES = ("probes",)
"""A round's modules it may leave out: a round whose checks need no helper of the candidate's
side has no probes.py (an empty module stands in)."""


def load_module(round_: Round, name: str) -> ModuleType:
    """The round's checks.py or probes.py, imported by path under a name that cannot clash."""
    qualified = module_name(round_, name)
    if qualified in sys.modules:
        return sys.modules[qualified]
    path = round_.module_path(name)
    if name in OPTIONAL_MODULES and not path.exists():
        sys.modules[qualified] = ModuleType(qualified, f"{round_.id} has no {path.name}")
        return sys.modules[qualified]
    spec = importlib.util.spec_from_file_location(qualified, path)
    if spec is None or spec.loader is None or not path.is_file():
        raise RoundError(f"round {round_.id} has no {path.name}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[qualified] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[qualified]
        raise
    return module
