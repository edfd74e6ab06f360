"""The grader's own files: refused when not as installed, and a run that changes them fails."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from grader import integrity

from helpers import REPO, run_grader, write_workspace


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


def grader_rewritten_while_it_ran(tmp: pytest.TempPathFactory
                                  ) -> tuple[subprocess.CompletedProcess[str], Path]:
    """`grader check` from a copy of the grader, graded on code that appends to a file of that
    copy while it runs (run ahead): what the command said, and the file."""
    site = tmp.mktemp("site")
    shutil.copytree(REPO / "grader", site / "grader",
                    ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(REPO / "reference", site / "reference")
    root = write_workspace(tmp.mktemp("ws") / "ws", "numpy", start="stubs")
    (root / "exercises" / "part1_inplace.py").write_text(
        "import grader, pathlib\n"
        "path = pathlib.Path(grader.__file__).parent / 'rounds' / 'prefix-products' / "
        "'round.toml'\n"
        "path.write_text(path.read_text() + '\\n# was here\\n')\n"
        "def prefix_products_out(W, P):\n    raise NotImplementedError\n")
    done = run_grader("check", "part1", cwd=root,
                      env={"PYTHONPATH": str(site), "COLUMNS": "200"})
    return done, site / "grader" / "rounds" / "prefix-products" / "round.toml"


AHEAD = (grader_rewritten_while_it_ran,)


def test_a_check_whose_code_writes_into_the_grader_fails_and_says_how_to_restore(
        grading) -> None:  # type: ignore[no-untyped-def]
    """End to end, on a copy of the grader; the command exits 2 and says so."""
    done, target = grading.ahead.result(grader_rewritten_while_it_ran)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "# was here" in target.read_text()
    assert f"the grader's own files changed while it ran ({target} changed)" in \
        " ".join(done.stderr.split())
    assert "git checkout -- grader reference" in " ".join(done.stderr.split())
