"""A round's check table: checks.toml read against the round's checks.py and probes.py.

    [[check]]
    id = "part1.correctness"        # <part>.<name>; table order is run order
    kind = "correctness"            # a generic kind (grader.checks.kinds) or "custom"
    title = "Fills P with the right products"
    points = 6                      # shares of the part's weight
    flavors = ["torch"]             # optional: the flavors it applies to (default: the part's)
    needs = "cuda"                  # optional: worth no points where the machine lacks it
    after = ["part1.correctness"]   # optional: checks whose failure explains this one's
    voids = ["part3.correctness"]   # optional: checks whose results do not count if this fails
    void_message = "..."            # why, shown on each voided check (some kinds say it)
    rank = 2                        # optional: 2 values, 1 properties, 0 validation (see Check)
    observed = "inside"             # optional: the verdict rests on what the probe saw inside
                                    # the candidate's process (see Check; the default is the
                                    # kind's: inside for no_autograd, complexity, depth)
    ...                             # the kind's own keys

    [mistakes.reversed-order]       # a known slip: what it computes (or a matcher), its hint
    output = "reversed_order"       # a function of checks.py: case -> what the slip returns
    hint = "matmul is not commutative: ..."

    [catalogues]                    # named lists of slips a check's `mistakes` may use
    forward = ["first-slot", "reversed-order"]

    [defaults]                      # values for any check that reads the key and lacks it
    shape_hint = "The result has one (D, D) matrix per input matrix."

Loaded in the worker only (it imports numpy and the round's code); cached per round.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from functools import cache
from pathlib import Path
from types import ModuleType
from typing import Any

from grader.checks.base import OBSERVED, Check
from grader.checks.kinds import (
    KINDS,
    MEASURED_KINDS,
    OBSERVED_INSIDE,
    RANKS,
    VOID_MESSAGES,
    Spec,
)
from grader.checks.mistakes import Mistake, same_as
from grader.engine.documents import Unreadable, read_document, toml_document
from grader.engine.flavored import problems
from grader.engine.rounds import ROUND_FILE, TABLE_KEYS, Round, RoundError, load_module

CHECKS_FILE = "checks.toml"
CHECK_KEYS = {"id", "kind", "title", "points", "flavors", "needs", "after", "voids",
              "void_message", "rank", "observed", "measured"}
NEEDS = ("cuda",)


class MistakeBook:
    """The round's known slips by name, and the catalogues that group them."""

    def __init__(self, data: dict[str, Any], judge: ModuleType, where: str) -> None:
        self.mistakes: dict[str, Mistake] = {}
        for name, entry in data.get("mistakes", {}).items():
            here = f"{where}: mistakes.{name}"
            if set(entry) - {"output", "match", "hint"} or "hint" not in entry \
                    or ("output" in entry) == ("match" in entry):
                raise RoundError(f"{here}: needs hint and exactly one of output / match")
            key = "output" if "output" in entry else "match"
            fn = getattr(judge, entry[key], None)
            if not callable(fn):
                raise RoundError(f"{here}: checks.py has no function {entry[key]!r}")
            self.mistakes[name] = Mistake(name, same_as(fn) if key == "output" else fn,
                                          str(entry["hint"]))
        self.catalogues: dict[str, list[str]] = data.get("catalogues", {})
        for catalogue, names in self.catalogues.items():
            self.expand(names, f"{where}: catalogues.{catalogue}")

    def expand(self, names: Any, where: str) -> tuple[Mistake, ...]:
        """Mistake names and catalogue names, in order, as Mistakes."""
        if not isinstance(names, list):
            raise RoundError(f"{where}: mistakes must be a list of names")
        found: list[Mistake] = []
        for name in names:
            if name in self.catalogues:
                found += self.expand(self.catalogues[name], where)
            elif name in self.mistakes:
                found.append(self.mistakes[name])
            else:
                raise RoundError(f"{where}: unknown mistake or catalogue {name!r}")
        return tuple(found)


def _signature_rows(entries: list[Any], round_: Round) -> dict[int, frozenset[str]]:
    """The correctness rows that also judge their function's signature (Spec.signature_flavors),
    by index: in each part, for each function and flavor, the first correctness row that calls
    it, so that a changed default costs one check its points, not every check of the function."""
    seen: set[tuple[str, str, str]] = set()
    firsts: dict[int, frozenset[str]] = {}
    for index, entry in enumerate(entries):
        if not isinstance(entry, dict) or entry.get("kind") != "correctness" \
                or not isinstance(entry.get("function"), str) or "run" in entry:
            continue
        part_id = str(entry.get("id", "")).split(".", 1)[0]
        if part_id not in round_.part_ids:
            continue
        flavors = entry.get("flavors", round_.part(part_id).flavors)
        mine = frozenset(f for f in flavors if (part_id, entry["function"], f) not in seen)
        seen |= {(part_id, entry["function"], f) for f in mine}
        if mine:
            firsts[index] = mine
    return firsts


WATCHING_KINDS = frozenset({"inputs_unchanged", "fresh_result", "keeps_dtype", "dtype_device",
                            "returns_float"})
"""The kinds that watch a function's calls for a property (Spec.value_cases)."""


def _calls(entry: dict[str, Any]) -> tuple[Any, ...]:
    """How a row calls its function: its part, the function, the `call` helper and `args`."""
    return (str(entry.get("id", "")).split(".", 1)[0], entry.get("function"),
            entry.get("call"), tuple(entry.get("args", ())))


def _value_case_rows(entries: list[Any]) -> dict[int, tuple[str, tuple[str, ...]]]:
    """For each row of a watching kind (WATCHING_KINDS) that calls a function, the case maker
    of its part's first correctness row calling that function the same way (the same `call`
    helper and `args`), and the ids of every such row, by index (Spec.value_cases,
    Spec.value_checks)."""
    makers: dict[tuple[Any, ...], str] = {}
    ids: dict[tuple[Any, ...], tuple[str, ...]] = {}
    for entry in entries:
        if isinstance(entry, dict) and entry.get("kind") == "correctness" and "run" not in entry \
                and isinstance(entry.get("function"), str) and isinstance(entry.get("cases"), str):
            makers.setdefault(_calls(entry), entry["cases"])
            ids[_calls(entry)] = (*ids.get(_calls(entry), ()), str(entry.get("id")))
    return {index: (makers[_calls(entry)], ids[_calls(entry)])
            for index, entry in enumerate(entries)
            if isinstance(entry, dict) and entry.get("kind") in WATCHING_KINDS
            and isinstance(entry.get("function"), str) and _calls(entry) in makers}


def _malformed_rows(entries: list[Any]) -> dict[int, tuple[str, str]]:
    """For each correctness row that calls a function, the case maker of its part's
    validation row calling it the same way (the same `call` helper and `args`) and the error
    it expects, by index (Spec.malformed): a repair that makes a valid input pass must still
    reject those (a guard left out rejects nothing)."""
    makers: dict[tuple[Any, ...], tuple[str, str]] = {}
    for entry in entries:
        if isinstance(entry, dict) and entry.get("kind") == "validation" \
                and isinstance(entry.get("cases"), str):
            makers.setdefault(_calls(entry), (entry["cases"],
                                             str(entry.get("error", "ValueError"))))
    return {index: makers[_calls(entry)] for index, entry in enumerate(entries)
            if isinstance(entry, dict) and entry.get("kind") == "correctness"
            and "run" not in entry and _calls(entry) in makers}


def _check(entry: dict[str, Any], index: int, round_: Round, judge: ModuleType,
           helpers: ModuleType, book: MistakeBook, defaults: dict[str, Any],
           where: str, signature_flavors: frozenset[str] = frozenset(),
           value_cases: tuple[str, tuple[str, ...]] | None = None,
           malformed: tuple[str, str] | None = None) -> Check:
    here = f"{where}: check[{index}]"
    for key in ("id", "kind", "title", "points"):
        if key not in entry:
            raise RoundError(f"{here}: missing {key}")
    check_id, kind = str(entry["id"]), str(entry["kind"])
    here = f"{where}: {check_id}"
    part_id = check_id.split(".", 1)[0]
    part = round_.part(part_id)
    if kind not in KINDS:
        raise RoundError(f"{here}: unknown kind {kind!r}; kinds: {', '.join(KINDS)}")
    flavors = tuple(entry.get("flavors", part.flavors))
    if set(flavors) - set(part.flavors):
        raise RoundError(f"{here}: flavors {list(flavors)} not all among {part_id}'s")
    _check_flavored(entry, flavors, round_, here)
    needs = entry.get("needs")
    if needs is not None and needs not in NEEDS:
        raise RoundError(f"{here}: needs must be one of {', '.join(NEEDS)}")
    spec = Spec({k: v for k, v in entry.items() if k not in CHECK_KEYS}, here, round_, judge,
                helpers, book.expand, defaults, signature_flavors, value_cases, malformed)
    plan = KINDS[kind](spec)
    spec.finish()
    observed = entry.get("observed", "inside" if kind in OBSERVED_INSIDE else "outside")
    if observed not in OBSERVED:
        raise RoundError(f"{here}: observed must be one of {', '.join(OBSERVED)}")
    measured = entry.get("measured", kind in MEASURED_KINDS)
    if "measured" in entry and kind != "custom":
        raise RoundError(f"{here}: measured is a custom row's key: a {kind} check's kind says "
                         "whether it is measured")
    if not isinstance(measured, bool):
        raise RoundError(f"{here}: measured must be true or false")
    voids = tuple(entry.get("voids", ()))
    void_message = str(entry.get("void_message", VOID_MESSAGES.get(kind, "")))
    if voids and not void_message:
        raise RoundError(f"{here}: voids needs a void_message saying why")
    return Check(id=check_id, title=str(entry["title"]), points=float(entry["points"]),
                 plan=plan, flavors=flavors, needs=needs, after=tuple(entry.get("after", ())),
                 voids=voids, void_message=void_message,
                 rank=int(entry.get("rank", RANKS.get(kind, 1))), observed=observed,
                 measured=measured)


def _table(round_: Round) -> tuple[Path, dict[str, Any]]:
    """Where the round's check table is, and its tables: checks.toml, or round.toml's own
    [[check]] and [mistakes] where the round has no checks.toml (a small round in one file)."""
    path = round_.folder / CHECKS_FILE
    described = round_.folder / ROUND_FILE
    try:
        if not path.exists():
            data = read_document(described, toml_document)
            return described, {key: value for key, value in data.items() if key in TABLE_KEYS}
        data = read_document(path, toml_document)
        inline = TABLE_KEYS & set(read_document(described, toml_document))
    except Unreadable as exc:
        raise RoundError(f"{path}: {exc}") from exc
    if inline:
        raise RoundError(f"{described}: {', '.join(sorted(inline))} belong in {CHECKS_FILE} "
                         "when the round has one")
    unknown = sorted(set(data) - TABLE_KEYS)
    if unknown:
        raise RoundError(f"{path}: unknown table(s) {', '.join(unknown)}")
    return path, data


def _texts(value: Any) -> Iterator[str]:
    """Every string in a table, however deep."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _texts(item)
    elif isinstance(value, list):
        for item in value:
            yield from _texts(item)


def _check_flavored(table: Any, flavors: Iterable[str], round_: Round, where: str) -> None:
    """Text with flavored alternatives (grader.engine.flavored) gives one for each flavor it
    can be shown in, and names no flavor the round lacks."""
    for text in _texts(table):
        wrong = problems(text, flavors, round_.flavors)
        if wrong:
            raise RoundError(f"{where}: {wrong[0]}")


@cache
def round_checks(round_: Round) -> tuple[Check, ...]:
    """Every check of a round, in run order; a malformed table raises RoundError."""
    path, data = _table(round_)
    for name in ("mistakes", "catalogues", "defaults"):
        _check_flavored(data.get(name, {}), round_.flavors, round_, f"{path} [{name}]")
    judge, helpers = load_module(round_, "checks"), load_module(round_, "probes")
    book = MistakeBook(data, judge, str(path))
    defaults = data.get("defaults", {})
    entries = data.get("check", [])
    firsts, linked = _signature_rows(entries, round_), _value_case_rows(entries)
    malformed = _malformed_rows(entries)
    checks = tuple(_check(entry, i, round_, judge, helpers, book, defaults, str(path),
                          firsts.get(i, frozenset()), linked.get(i), malformed.get(i))
                   for i, entry in enumerate(entries))
    ids = [c.id for c in checks]
    if len(set(ids)) != len(ids):
        raise RoundError(f"{path}: check ids repeat")
    parts = {c.id: c.part_id for c in checks}
    for check in checks:
        for other in (*check.after, *check.voids):
            if parts.get(other) != check.part_id:
                raise RoundError(f"{path}: {check.id} names {other!r} (after or voids), which "
                                 "is not a check of the same part")
    _no_cycles(checks, str(path))
    return checks


def _no_cycles(checks: tuple[Check, ...], where: str) -> None:
    """`after` must not loop back: each failure needs a root to be folded under."""
    after = {c.id: c.after for c in checks}

    def visit(check_id: str, trail: tuple[str, ...]) -> None:
        if check_id in trail:
            raise RoundError(f"{where}: `after` loops: {' -> '.join(trail + (check_id,))}")
        for cause in after.get(check_id, ()):
            visit(cause, trail + (check_id,))

    for check in checks:
        visit(check.id, ())


def checks_for(round_: Round, part_id: str, flavor: str) -> list[Check]:
    """The checks of one part that apply to a flavor, in run order."""
    return [c for c in round_checks(round_) if c.part_id == part_id and flavor in c.flavors]


@cache
def measured_checks(round_: Round, flavor: str) -> frozenset[str]:
    """The round's checks measured in timed rounds (checks.base.Measured) in a flavor: those a
    busy machine could sway, and those a caller may skip (Request.measured)."""
    return frozenset(c.id for c in round_checks(round_) if flavor in c.flavors and c.measured)
