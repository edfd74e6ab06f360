"""A starter notebook per round (`grader init --notebook`): a set-up cell, then each part's
contract and its stub under `%%part`, for the magics of grader.jupyter to save and check."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from grader.engine.rounds import Round
from grader.engine.workspace import Workspace

NOTEBOOK_FORMAT = {"nbformat": 4, "nbformat_minor": 5}
KERNEL = {"kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
          "language_info": {"name": "python"}}


def notebook_name(round_: Round) -> str:
    return f"{round_.id}.ipynb"


def _cell(kind: str, cell_id: str, source: str) -> dict[str, Any]:
    cell: dict[str, Any] = {"cell_type": kind, "id": cell_id, "metadata": {},
                            "source": source.splitlines(keepends=True)}
    if kind == "code":
        cell.update(execution_count=None, outputs=[])
    return cell


def _contract(stub: str) -> str:
    """The stub's module docstring: what the part asks for, in the stub's own words."""
    body = stub.split('"""', 2)
    return body[1].strip() if len(body) == 3 else ""


def starter_notebook(workspace: Workspace) -> dict[str, Any]:
    """A notebook for the workspace's round and flavor: set-up, then per part its contract and
    a cell holding its stub under `%%part`, then a check of everything."""
    round_, flavor = workspace.round, workspace.flavor
    cells = [
        _cell("markdown", "intro", f"# {round_.title}\n\n{round_.summary}\n\n"
              "Run the set-up cell once. Each part's cell is that part's whole exercise file: "
              "edit it and run it to save it and check the part (the file's previous version "
              "is backed up first). `%grader hint part1` gives a hint, `%grader explain` the "
              "topics, `%grader mock start` a timed round. Your code runs in the grader's "
              "own processes, never in this kernel."),
        _cell("code", "setup", "%load_ext grader\n"
              f"%grader workspace . --round {round_.id} --flavor {flavor}"),
    ]
    for part in round_.parts_for(flavor):
        stub = (round_.stubs_dir(flavor) / part.file).read_text()
        cells.append(_cell("markdown", f"{part.id}-contract",
                           f"## {part.id}: {part.title}\n\n{_contract(stub)}"))
        cells.append(_cell("code", f"{part.id}-code", f"%%part {part.id}\n{stub}"))
    cells.append(_cell("code", "check-all", "%grader check"))
    return {"cells": cells, "metadata": KERNEL, **NOTEBOOK_FORMAT}


def write_starter(workspace: Workspace) -> Path | None:
    """Write the starter notebook into the workspace; None when one is there already (it may
    hold the candidate's work, so it is never overwritten)."""
    path = workspace.root / notebook_name(workspace.round)
    if path.exists() or path.is_symlink():
        return None
    path.write_text(json.dumps(starter_notebook(workspace), indent=1, ensure_ascii=False)
                    + "\n")
    return path
