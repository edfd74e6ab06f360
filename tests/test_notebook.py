"""The notebook front end for real: `grader init --notebook` writes a starter notebook, and an
IPython kernel driven by nbclient runs it as Jupyter would, with a wrong part, a right part,
code that would kill the kernel if it ran there, and mistyped magics."""

from __future__ import annotations

import json
import os
import re
from typing import Any

import pytest

for _extra in ("nbclient", "nbformat", "ipykernel"):
    pytest.importorskip(_extra, reason="the notebook extra is not installed "
                        "(pip install -e '.[notebook]')")

import nbformat  # noqa: E402 - after the extra is known to be there
from nbclient import NotebookClient  # noqa: E402

from grader.candidate.backups import list_backups  # noqa: E402
from grader.engine.workspace import load_workspace  # noqa: E402

from helpers import PREFIX, REPO, run_grader, solution  # noqa: E402

pytestmark = [pytest.mark.xdist_group("notebook"), pytest.mark.slow]  # a Jupyter kernel

KILLS_ITS_PROCESS = "import os\nos._exit(3)\n"


ANSI = re.compile(r"\x1b\[[0-9;]*m")


def outputs(cell: Any) -> tuple[str, str]:
    """What a code cell showed: its displays and stdout, and its stderr (without the colours
    rich's plain-text rendering keeps in a notebook)."""
    shown, errors = [], []
    for output in cell.outputs:
        if output.output_type == "stream":
            (errors if output.name == "stderr" else shown).append(output.text)
        elif output.output_type in ("display_data", "execute_result"):
            shown.append(output.data.get("text/plain", ""))
        elif output.output_type == "error":
            errors.append(f"{output.ename}: {output.evalue}")
    return ANSI.sub("", "".join(shown)), ANSI.sub("", "".join(errors))


@pytest.fixture(scope="module")
def ran(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    root = tmp_path_factory.mktemp("notebook") / "ws"
    made = run_grader("init", "--notebook", "--flavor", "numpy", root, cwd=root.parent)
    assert made.returncode == 0, made.stderr
    path = root / "prefix-products.ipynb"
    assert f"Next: open {path} in Jupyter" in made.stdout
    notebook = nbformat.read(path, as_version=4)
    nbformat.validate(notebook)
    by_id = {cell.id: cell for cell in notebook.cells}
    right = PREFIX.reference_file(PREFIX.part("part1"), "numpy").read_text()
    reversed_order = solution("part1_reversed_order").files("numpy")["part1_inplace.py"]
    by_id["part1-code"].source = f"%%part part1\n{reversed_order.read_text()}"
    by_id["part2-code"].source = f"%%part part2\n{KILLS_ITS_PROCESS}"
    extra = [("right", f"%%part part1\n{right}"),
             ("kernel", "import os, sys\nprint(os.getpid(), 'torch' in sys.modules)"),
             ("no-part", "%%part part9\nx = 1\n"),
             ("bare-part", "%%part\nx = 1\n"),
             ("no-command", "%grader chekc part1"),
             ("bad-quote", "%grader hint 'part1"),
             ("hint", "%grader hint part1")]
    cells = [cell for cell in notebook.cells if cell.id not in ("part3-code", "part4-code",
                                                                 "check-all")]
    cells += [nbformat.v4.new_code_cell(source, id=name) for name, source in extra]
    notebook.cells = cells
    env = {"PYTHONPATH": str(REPO), "COLUMNS": "120"}
    saved = {name: os.environ.get(name) for name in env}
    os.environ.update(env)
    try:
        NotebookClient(notebook, timeout=240, kernel_name="python3",
                       resources={"metadata": {"path": str(root)}}).execute()
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
    return {"root": root, "cells": {cell.id: outputs(cell) for cell in notebook.cells
                                    if cell.cell_type == "code"},
            "right": right, "starter": json.loads(path.read_text())}


def test_the_starter_holds_each_parts_contract_and_stub(ran: dict[str, Any]) -> None:
    cells = {cell["id"]: "".join(cell["source"]) for cell in ran["starter"]["cells"]}
    assert cells["setup"] == ("%load_ext grader\n"
                              "%grader workspace . --round prefix-products --flavor numpy")
    for part in PREFIX.parts_for("numpy"):
        stub = (PREFIX.stubs_dir("numpy") / part.file).read_text()
        assert cells[f"{part.id}-code"] == f"%%part {part.id}\n{stub}"
        assert cells[f"{part.id}-contract"].startswith(f"## {part.id}: {part.title}\n\n")
        assert stub.split('"""')[1].strip() in cells[f"{part.id}-contract"]
    assert cells["check-all"] == "%grader check"


def test_a_wrong_part_gets_its_scorecard_under_the_cell(ran: dict[str, Any]) -> None:
    assert ran["cells"]["setup"][0].startswith(
        f"Using the numpy workspace for the prefix-products round at {ran['root']}")
    shown, errors = ran["cells"]["part1-code"]
    assert "part1 · In-place forward" in shown and "✗ failed    part1.correctness" in shown
    assert "matmul is not commutative" in shown
    assert "Score " in shown and "not passing yet" in shown
    assert "Traceback" not in shown + errors


def test_a_right_part_passes_and_the_file_holds_the_cell(ran: dict[str, Any]) -> None:
    shown, _ = ran["cells"]["right"]
    assert "Score 20.0/20.0" in shown and "all checks passed" in shown
    assert shown.startswith("saved part1; the file it replaced is in backup ")
    assert (ran["root"] / "exercises" / "part1_inplace.py").read_text() == ran["right"]
    reasons = sorted(b.reason for b in list_backups(load_workspace(ran["root"])))
    assert reasons == ["before a notebook cell wrote part1"] * 2 + [
        "before a notebook cell wrote part2"]  # the stub, then the wrong cell, kept


def test_candidate_code_never_runs_in_the_kernel(ran: dict[str, Any]) -> None:
    """Code that ends its process at import scores an error, and the kernel lives on (the
    cells after it ran); the kernel never imported torch either."""
    shown, _ = ran["cells"]["part2-code"]
    assert "part2 · Out-of-place forward   0.0/15.0" in shown
    assert "the process importing part2_out_of_place.py exited with code 3" in shown
    pid, torch_imported = ran["cells"]["kernel"][0].split()
    assert int(pid) != os.getpid() and torch_imported == "False"


@pytest.mark.parametrize(("cell", "says"), [
    ("no-part", "Error: prefix-products has no part 'part9'; its parts: part1, part2, part3, "
                "part4"),
    ("bare-part", "Error: write %%part PART on the cell's first line, e.g. %%part part1"),
    ("no-command", "Error: No such command 'chekc'."),
    ("bad-quote", "Error: No closing quotation"),
])
def test_a_mistyped_magic_is_one_line(ran: dict[str, Any], cell: str, says: str) -> None:
    shown, errors = ran["cells"][cell]
    assert says in errors, (shown, errors)
    assert "Traceback" not in shown + errors and "Error" not in shown


def test_line_magics_run_the_commands(ran: dict[str, Any]) -> None:
    shown, _ = ran["cells"]["hint"]
    assert "part1 hint 1/" in shown and PREFIX.part("part1").hints[0].split()[0] in shown
