"""The grader's own files: refused when not as installed, and a run that changes them fails."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from grader import integrity

from helpers import REPO, write_workspace


def test_a_file_not_as_pip_recorded_refuses_grading(monkeypatch: pytest.MonkeyPatch) -> None:
    now = integrity.snapshot()
    some = sorted(now)[0]
    monkeypatch.setattr(integrity, "recorded", lambda: {some: "0" * 64})
    with pytest.raises(integrity.IntegrityError) as raised:
        integrity.check_installed()
    assert f"{some} changed" in str(raised.value)
    assert integrity.REINSTALL in str(raised.value)


def test_files_added_since_the_install_are_not_a_mismatch(monkeypatch: pytest.MonkeyPatch) -> None:
    """A wheel's RECORD lists what pip wrote; bytecode caches and the like come later."""
    now = integrity.snapshot()
    monkeypatch.setattr(integrity, "recorded", lambda: dict(list(now.items())[:5]))
    assert integrity.check_installed() == now


def test_differences_name_each_changed_missing_and_added_file() -> None:
    assert integrity.differences({"a": "1", "b": "2", "c": "3"}, {"a": "1", "b": "9", "d": "4"}) \
        == ["b changed", "c is missing", "d was added"]


def test_a_check_whose_code_writes_into_the_grader_fails_and_says_how_to_restore(
        tmp_path: Path) -> None:
    """End to end, on a copy of the grader: the code under test appends to a file of the
    installed package while `grader check` runs; the command exits 2 and says so."""
    site = tmp_path / "site"
    shutil.copytree(REPO / "grader", site / "grader",
                    ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(REPO / "reference", site / "reference")
    target = site / "grader" / "rounds" / "prefix-products" / "round.toml"
    root = write_workspace(tmp_path / "ws", "numpy", start="stubs")
    (root / "exercises" / "part1_inplace.py").write_text(
        "import grader, pathlib\n"
        "path = pathlib.Path(grader.__file__).parent / 'rounds' / 'prefix-products' / "
        "'round.toml'\n"
        "path.write_text(path.read_text() + '\\n# was here\\n')\n"
        "def prefix_products_out(W, P):\n    raise NotImplementedError\n")
    env = {**os.environ, "PYTHONPATH": str(site), "NO_COLOR": "1", "COLUMNS": "200"}
    done = subprocess.run([sys.executable, "-m", "grader", "check", "part1"], cwd=root,
                          env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "# was here" in target.read_text()
    assert f"the grader's own files changed while it ran ({target} changed)" in \
        " ".join(done.stderr.split())
    assert "git checkout -- grader reference" in " ".join(done.stderr.split())
