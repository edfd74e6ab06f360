"""The runner beyond what a status shows: one worker answering many requests, a grader-side
failure that must not take the worker down, and candidate files always graded as they are on
disk now."""

from __future__ import annotations

import os
import py_compile
from pathlib import Path

import pytest

from grader.runner import GraderCrash, Request

from helpers import checks_by_id, write_workspace


def test_a_grader_failure_is_reported_and_the_worker_goes_on(grading, tmp_path: Path) -> None:
    root = write_workspace(tmp_path / "ws", "numpy")
    with pytest.raises(GraderCrash, match="unknown part 'part9'"):
        grading.worker.run(Request(id="bad", root=str(root), flavor="numpy", parts=["part9"],
                                   seed=1))
    result = grading.run(root, "numpy", ["part1"])
    assert result.parts[0].full_marks


def test_each_request_sees_the_files_as_they_are_now(grading, tmp_path: Path) -> None:
    """Same size, same mtime, a bytecode cache of the old text beside it: still graded fresh.

    Python's bytecode cache trusts (mtime in whole seconds, size); an edit that keeps both (or
    another submission copied over with its timestamps) must not be graded as the old code.
    """
    root = write_workspace(tmp_path / "ws", "numpy")
    part1 = root / "exercises" / "part1_inplace.py"
    right = part1.read_text()
    wrong = right.replace("P[i] = P[i - 1] @ W[i]", "P[i] = W[i] @ P[i - 1]")
    assert wrong != right and len(wrong) == len(right)
    part1.write_text(wrong)
    py_compile.compile(str(part1), doraise=True)
    stamp = part1.stat().st_mtime
    assert checks_by_id(grading.run(root, "numpy", ["part1"]))["part1.correctness"].status \
        == "failed"
    part1.write_text(right)
    os.utime(part1, (stamp, stamp))
    assert checks_by_id(grading.run(root, "numpy", ["part1"]))["part1.correctness"].status \
        == "passed"
