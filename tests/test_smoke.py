"""Smoke test of the whole pipeline until the full suite lands: references pass, stubs fail."""

from __future__ import annotations

import shutil
from pathlib import Path

from click.testing import CliRunner

from grader.cli import cli
from grader.workspace import init_workspace

REPO = Path(__file__).resolve().parents[1]


def test_reference_gets_full_marks_and_stub_fails(tmp_path: Path) -> None:
    workspace = init_workspace(tmp_path / "ws", "numpy")
    stub = CliRunner().invoke(cli, ["check", "part1", "--workspace", str(workspace.root), "--json"])
    assert stub.exit_code == 1
    assert '"status": "passed"' not in stub.output
    for source in (REPO / "reference" / "numpy").glob("part*.py"):
        shutil.copy(source, workspace.exercises / source.name)
    done = CliRunner().invoke(cli, ["check", "part1", "--workspace", str(workspace.root), "--json"])
    assert done.exit_code == 0, done.output
