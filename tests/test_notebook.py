"""The notebook front end for real: a starter notebook that `grader init --notebook` wrote is
executed in an IPython kernel (nbclient, kernel `python3`) with part1's cell holding wrong code,
then part1's cell again holding the reference, then line magics and hostile input; each cell's
outputs are asserted. The candidate's code runs in the runner's process, never in the kernel,
and no cell loses what the one before wrote."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from conftest import Grading

from helpers import PREFIX, REPO, SESSION_ENV, run_grader, solution

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")
pytest.importorskip("ipykernel")

FLAVOR = "numpy"
PART = PREFIX.part("part1")
WRONG = solution("part1_reversed_order").folder / PART.file
MAGICS = {
    "list": "%grader list",
    "hint": "%grader hint part1",
    "unknown": "%grader frobnicate",
    "quote": "%grader check 'part1",
    "no part": "%%part part9\nx = 1",
    "two parts": "%%part part1 part2\nx = 1",
    "no workspace": "%grader workspace /nonexistent/ws",
    "still there": "%grader workspace",
    "in kernel": "import sys; print('in kernel:', 'part1_inplace' in sys.modules, "
                 "'torch' in sys.modules)",
    "named workspace": "%grader list --workspace /nonexistent/ws",
    "explain": "%grader explain",
    "mock start": "%grader mock start --minutes 30",
    "mock status": "%grader mock status",
    "init": "%grader init --round prefix-products --flavor torch other",
    "after init": "%grader workspace",
    "init taken": "%grader init .",
    "after taken": "%grader workspace",
}
"""Cells run after the part's cells, by what each shows."""
ANSI = re.compile(r"\x1b\[[0-9;]*m")


def executed_starter(tmp: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    """Init a workspace with its notebook, keep its intro and set-up cells and part1's contract,
    run part1's cell wrong then right, then the MAGICS; each code cell's output by name."""
    root = tmp.mktemp("notebook") / "ws"
    made = run_grader("init", root, "--round", PREFIX.id, "--flavor", FLAVOR, "--notebook",
                      cwd=root.parent)
    assert made.returncode == 0, made.stderr
    notebook = nbformat.read(root / f"{PREFIX.id}.ipynb", as_version=4)
    nbformat.validate(notebook)
    intro, setup, contract, stub = notebook.cells[:4]
    assert stub.source.startswith("%%part part1\n")
    named = {
        "setup": setup,
        "wrong": nbformat.v4.new_code_cell(f"%%part part1\n{WRONG.read_text()}"),
        "right": nbformat.v4.new_code_cell(
            f"%%part part1\n{PREFIX.reference_file(PART, FLAVOR).read_text()}"),
        **{name: nbformat.v4.new_code_cell(source) for name, source in MAGICS.items()},
    }
    notebook.cells = [intro, contract, *named.values()]
    nbclient.NotebookClient(notebook, kernel_name="python3", timeout=240,
                            resources={"metadata": {"path": str(root)}}
                            ).execute(env={**SESSION_ENV, "PYTHONPATH": str(REPO)})
    return root, {name: _text(cell) for name, cell in named.items()}


JOBS = (executed_starter,)


def _text(cell: Any) -> str:
    """What a cell showed: its streams and what it displayed, each tagged by its kind."""
    shown = []
    for output in cell.outputs:
        if output.output_type == "stream":
            shown.append(f"[{output.name}]{output.text}")
        elif output.output_type == "error":
            shown.append(f"[error]{output.ename}: {output.evalue}")
        else:  # rich's inline rendering: HTML for the notebook, plain text beside it
            assert "text/html" in output.data
            shown.append(f"[display]{output.data['text/plain']}")
    return ANSI.sub("", "".join(shown))


@pytest.fixture
def executed(grading: Grading) -> tuple[Path, dict[str, str]]:
    done: tuple[Path, dict[str, str]] = grading.once(executed_starter)
    return done


def test_starter_notebook_holds_every_part(tmp_path: Path) -> None:
    made = run_grader("init", tmp_path / "ws", "--round", PREFIX.id, "--notebook", cwd=tmp_path)
    assert made.returncode == 0, made.stderr
    notebook = nbformat.read(tmp_path / "ws" / f"{PREFIX.id}.ipynb", as_version=4)
    nbformat.validate(notebook)
    parts = PREFIX.parts_for(PREFIX.default_flavor)
    assert [c.cell_type for c in notebook.cells] == ["markdown", "code"] + ["markdown",
                                                                           "code"] * len(parts)
    assert notebook.cells[1].source == "%load_ext grader\n%grader workspace ."
    for part, contract, code in zip(parts, notebook.cells[2::2], notebook.cells[3::2],
                                    strict=True):
        assert contract.source.startswith(f"## {part.id}: {part.title} (")
        stub = (tmp_path / "ws" / "exercises" / part.file).read_text()
        assert code.source == f"%%part {part.id}\n{stub}"


def test_init_refuses_a_taken_folder_and_writes_no_notebook(tmp_path: Path) -> None:
    assert run_grader("init", tmp_path, "--notebook", cwd=tmp_path).returncode == 0
    notebook = tmp_path / f"{PREFIX.id}.ipynb"
    notebook.write_text("my notes")
    again = run_grader("init", tmp_path, "--notebook", cwd=tmp_path)
    assert again.returncode == 1
    assert "already exists: not overwriting" in again.stderr
    assert "Traceback" not in again.stderr
    assert notebook.read_text() == "my notes"


def test_setup_cell_finds_the_workspace(executed: tuple[Path, dict[str, str]]) -> None:
    root, shown = executed
    assert shown["setup"] == f"[stdout]Workspace: {root} ({PREFIX.id} round, {FLAVOR} flavor)\n"
    assert shown["still there"] == shown["setup"]


def test_wrong_part_fails_with_its_root_cause_first(
        executed: tuple[Path, dict[str, str]]) -> None:
    _, shown = executed
    wrong = shown["wrong"]
    assert wrong.startswith("[stdout]Saved exercises/part1_inplace.py; the file it replaced is "
                            "in backup ")
    assert f"part1 · {PART.title}   0.0/20.0" in wrong
    assert f"[display]grader · {PREFIX.id} · {FLAVOR} flavor · seed " in wrong
    assert re.search(r"✗ failed +part1\.correctness", wrong)
    assert re.search(r"first wrong entry P\[\d", wrong)
    assert "hint: matmul is not commutative" in wrong
    assert "Score 0.0/20.0  ·  3 passed, 7 failed  ·  not passing yet" in wrong
    assert "[stderr]" not in wrong and "[error]" not in wrong


def test_right_part_passes_and_the_wrong_one_is_backed_up(
        executed: tuple[Path, dict[str, str]]) -> None:
    root, shown = executed
    right = shown["right"]
    assert f"part1 · {PART.title}   20.0/20.0" in right
    assert "Score 20.0/20.0  ·  10 passed  ·  all checks passed" in right
    assert "[stderr]" not in right and "[error]" not in right
    name = re.search(r"in backup (\S+) ", right)
    assert name is not None
    kept = root / ".grader" / "backups" / name.group(1) / "files" / "exercises" / PART.file
    assert kept.read_text() == WRONG.read_text()
    assert (root / "exercises" / PART.file).read_text() == \
        PREFIX.reference_file(PART, FLAVOR).read_text()


def test_line_magics_render_inline(executed: tuple[Path, dict[str, str]]) -> None:
    _, shown = executed
    assert "part1" in shown["list"] and "20.0/20.0" in shown["list"]
    assert "part1 hint 1/" in shown["hint"] and "nudge" in shown["hint"]
    assert shown["in kernel"] == "[stdout]in kernel: False False\n"
    assert "version-counter" in shown["explain"] and "hillis-steele" in shown["explain"]
    assert shown["mock start"].startswith("[display]Mock round started: 30:00 (until ")
    assert "mock round · 00:0" in shown["mock status"]
    assert re.search(r"part1 +│ working", shown["mock status"])


@pytest.mark.parametrize(("cell", "message"), [
    ("unknown", "Error: usage: %grader workspace [DIR] | %grader {check|"),
    ("quote", "Error: cannot read the arguments: No closing quotation"),
    ("no part", "Error: part9: not a part of round prefix-products (numpy flavor); its parts: "),
    ("two parts", "Error: usage: %%part PART"),
    ("no workspace", "Error: /nonexistent/ws does not exist"),
    ("named workspace", "Error: /nonexistent/ws does not exist"),
])
def test_magic_errors_are_one_line(executed: tuple[Path, dict[str, str]], cell: str,
                                   message: str) -> None:
    _, shown = executed
    assert shown[cell].startswith(f"[stderr]{message}")
    assert shown[cell].count("\n") == 1


def test_init_in_the_notebook_switches_to_the_new_workspace(
        executed: tuple[Path, dict[str, str]]) -> None:
    root, shown = executed
    assert shown["init"].startswith(f"[stdout]Created a torch workspace for the {PREFIX.id} "
                                    f"round at {root / 'other'}\n")
    assert shown["after init"] == (f"[stdout]Workspace: {root / 'other'} ({PREFIX.id} round, "
                                   "torch flavor)\n")
    assert shown["init taken"].startswith(f"[stderr]Error: {root / 'grader.toml'}, "
                                          f"{root / 'exercises'} already exists: not overwriting")
    assert shown["after taken"] == shown["after init"]
