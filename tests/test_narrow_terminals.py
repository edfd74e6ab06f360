"""Nothing a command prints is lost on a narrow terminal: piped output is 80 columns, a split
pane 60. Ids stay whole, prose wraps, no cell is cut with "…", and a scorecard names every
check with its title at any width."""

from __future__ import annotations

import itertools
import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from grader.cli import cli
from grader.engine.rounds import installed

from helpers import PREFIX, run_grader, solution, write_workspace


def words(text: str) -> str:
    """The text with every run of whitespace gone: a cell wrapped or folded over lines reads as
    it was written."""
    return re.sub(r"\s+", "", text)


def boxed_rows(shown: str) -> list[list[str]]:
    """The rows of a boxed table, each cell's lines joined: a line whose first cell is empty
    carries on the row above."""
    rows: list[list[str]] = []
    for line in shown.splitlines():
        if not line.startswith("│"):
            continue
        cells = [cell.strip() for cell in line.strip().strip("│").split("│")]
        if cells[0] or not rows:
            rows.append(cells)
        else:
            rows[-1] = [f"{above} {more}".strip() for above, more in zip(rows[-1], cells,
                                                                        strict=True)]
    return rows


def fits(shown: str, columns: int) -> bool:
    """Nothing cut and nothing wider than the terminal."""
    return "…" not in shown and max(len(line) for line in shown.splitlines()) <= columns


@pytest.fixture(scope="module")
def stubs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_workspace(tmp_path_factory.mktemp("narrow") / "ws", "numpy", "stubs")


@pytest.mark.parametrize("columns", [60, 80])
def test_rounds_keeps_every_id_on_one_line_and_every_title(columns: int, stubs: Path) -> None:
    shown = run_grader("rounds", cwd=stubs, env={"COLUMNS": str(columns)}).stdout
    assert fits(shown, columns)
    rows = {row[0]: row for row in boxed_rows(shown)}
    assert list(rows) == list(installed())
    for round_ in installed().values():
        assert words(rows[round_.id][1]) == words(round_.title)


@pytest.mark.parametrize("columns", [40, 60])
def test_list_keeps_every_part_and_title(columns: int, stubs: Path) -> None:
    shown = run_grader("list", cwd=stubs, env={"COLUMNS": str(columns)}).stdout
    assert fits(shown, columns)
    rows = {row[0]: row for row in boxed_rows(shown)}
    assert list(rows) == list(PREFIX.part_ids)
    for part in PREFIX.parts:
        assert words(rows[part.id][1]) == words(part.title)


STATUS_MARKS = ("✓", "✗", "⏱", "–", "!", "?")


@pytest.mark.parametrize("columns", [60, 80])
def test_a_scorecard_names_every_check_with_its_title(columns: int, runner: CliRunner,
                                                      tmp_path: Path) -> None:
    """A part 1 that fails some checks: each check's row, its lines joined, holds its id and
    its whole title, and the rows come in the part's order. (`grader check` in this process,
    grading in the session's worker: the rows are the renderer's, whatever grades.)"""
    case = solution("part1_recomputes_from_scratch")
    root = write_workspace(tmp_path / "ws", "numpy", "stubs", case.files("numpy"))
    common = ["check", "part1", "--no-sandbox", "--seed", "1", "--workspace", str(root)]
    checks = json.loads(runner.invoke(cli, [*common, "--json"]).stdout)["parts"][0]["checks"]
    shown = runner.invoke(cli, common, env={"COLUMNS": str(columns)}).stdout
    assert fits(shown, columns)
    lines = shown.splitlines()
    starts = [i for i, line in enumerate(lines) if line[1:2] in STATUS_MARKS]
    assert len(starts) == len(checks)
    for check, start in zip(checks, starts, strict=True):
        row = lines[start][:lines[start].rstrip().rfind(" ")]  # without its points
        for line in itertools.takewhile(lambda line: line.startswith(" " * 12),
                                        lines[start + 1:]):
            row += line
        assert words(f"{check['id']} {check['title']}") in words(row), check["id"]
