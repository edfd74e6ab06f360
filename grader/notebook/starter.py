"""The starter notebook `grader init --notebook` writes: one notebook per workspace, so that
`pip install` plus that notebook is the whole set-up (Jupyter or Colab).

Written as nbformat v4 JSON by hand: the notebook is plain data, and `grader init` must not need
the notebook extra's libraries. Its prose lives in starter.toml.
"""

from __future__ import annotations

import json
import tomllib
from pathlib import Path
from typing import Literal, TypedDict

from grader.engine.workspace import EXERCISES_DIR, Workspace

PROSE = tomllib.loads((Path(__file__).with_name("starter.toml")).read_text(encoding="utf-8"))


class Cell(TypedDict, total=False):
    """One nbformat v4 cell (code cells also carry execution_count and outputs)."""

    cell_type: Literal["markdown", "code"]
    metadata: dict[str, object]
    source: str
    execution_count: None
    outputs: list[object]


def _markdown(text: str) -> Cell:
    return {"cell_type": "markdown", "metadata": {}, "source": text}


def _code(text: str) -> Cell:
    return {"cell_type": "code", "metadata": {}, "source": text, "execution_count": None,
            "outputs": []}


def cells(workspace: Workspace) -> list[Cell]:
    """The intro, the set-up cell, then each part's contract and its current file under %%part
    (the pristine stub in a fresh workspace)."""
    round_ = workspace.round
    made = [_markdown(PROSE["intro"].format(title=round_.title, summary=round_.summary,
                                            minutes=round_.minutes)),
            _code(PROSE["setup"])]
    for part in round_.parts_for(workspace.flavor):
        made.append(_markdown(PROSE["part"].format(
            id=part.id, title=part.title, budget=part.budget_minutes, file=part.file,
            functions="`, `".join(part.functions))))
        stub = (workspace.root / EXERCISES_DIR / part.file).read_text(encoding="utf-8")
        made.append(_code(f"%%part {part.id}\n{stub}"))
    return made


def write(workspace: Workspace) -> Path:
    """Write <workspace>/<round>.ipynb; never over an existing file (open "x")."""
    notebook = {
        "nbformat": 4, "nbformat_minor": 5,
        "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3",
                                    "language": "python"},
                     "language_info": {"name": "python"}},
        "cells": [{**cell, "id": f"cell-{index}"} for index, cell in enumerate(cells(workspace))],
    }
    path = workspace.root / f"{workspace.round.id}.ipynb"
    with path.open("x", encoding="utf-8") as made:
        made.write(json.dumps(notebook, indent=1) + "\n")
    return path
