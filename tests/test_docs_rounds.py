"""docs/rounds.md cannot drift from the code: every check kind has its row in the kinds table,
every key a kind reads (in any installed round) is named in that row, and every key any check
may carry is in the example table above it."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import pytest

from grader.checks import kinds, table
from grader.engine.rounds import get_round, installed

from helpers import REPO

DOC = (REPO / "docs" / "rounds.md").read_text()
ROW = re.compile(r"^\| `(?P<kind>\w+)` \|(?P<what>.*)\|(?P<keys>.*)\|\s*$", re.M)


def kind_rows() -> dict[str, str]:
    """Each kind's row: what it checks and its keys, as written."""
    return {m["kind"]: m["what"] + m["keys"] for m in ROW.finditer(DOC)}


def keys_read(monkeypatch: pytest.MonkeyPatch) -> dict[str, set[str]]:
    """The keys each kind reads, loading every installed round's checks afresh."""
    seen: dict[str, set[str]] = {}

    def recording(name: str, make: Callable[[Any], Any]) -> Callable[[Any], Any]:
        def wrapped(spec: Any) -> Any:
            made = make(spec)
            seen.setdefault(name, set()).update(spec._read)
            return made
        return wrapped

    for name, make in list(kinds.KINDS.items()):
        monkeypatch.setitem(kinds.KINDS, name, recording(name, make))
    table.round_checks.cache_clear()
    try:
        for round_id in installed():
            table.round_checks(get_round(round_id))
    finally:
        table.round_checks.cache_clear()
    return seen


def test_every_kind_has_its_row() -> None:
    assert set(kind_rows()) == set(kinds.KINDS)


def test_every_key_a_kind_reads_is_named_in_its_row(monkeypatch: pytest.MonkeyPatch) -> None:
    """(A custom check's keys are its plan's own parameters, named by the round.)"""
    rows = kind_rows()
    read = keys_read(monkeypatch)
    assert len(read) > 10, "the rounds were not loaded"
    missing = {kind: sorted(k for k in keys if not re.search(rf"\b{re.escape(k)}\b", rows[kind]))
               for kind, keys in read.items() if kind != "custom"}
    assert {k: v for k, v in missing.items() if v} == {}


def test_every_key_any_check_carries_is_in_the_example_table() -> None:
    example = DOC[DOC.index("[[check]]"):DOC.index("| kind |")]
    assert {k for k in table.CHECK_KEYS if not re.search(rf"^\s*{k} =", example, re.M)} == set()
