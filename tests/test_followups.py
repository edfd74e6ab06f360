"""The interviewer's follow-ups on real candidate code, run through the runner like any check:
the real torch errors from an in-place Part 1, and the live measurements behind the questions
on Parts 2 to 4."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from mock_support import edit, make_workspace

from grader.followups import FOLLOWUPS, followup_for
from grader.runner import Request, Worker
from grader.workspace import Workspace

NUMPY_ONLY = '''
import numpy as np

def prefix_products_out(W, P):
    W = np.asarray(W)            # fails on a tensor that requires grad
    P[0] = W[0]
    for i in range(1, W.shape[0]):
        P[i] = P[i - 1] @ W[i]
    return P
'''

BROKEN_BACKWARD = '''
def prefix_products_backward(W, dP):
    raise RuntimeError("still thinking")
'''


@pytest.fixture(scope="module")
def worker() -> Iterator[Worker]:
    with Worker() as warm:
        yield warm


def evidence(worker: Worker, workspace: Workspace, *parts: str) -> dict[str, Any]:
    return worker.follow_up(Request(id="followup", root=str(workspace.root),
                                    flavor=workspace.flavor, parts=list(parts), seed=1))


def test_in_place_part1_meets_the_version_counter_and_leaf_errors(
        worker: Worker, tmp_path: Path) -> None:
    workspace = make_workspace(tmp_path / "ws", solved=("part1",))
    found = evidence(worker, workspace, "part1")["part1"]
    assert found["status"] == "error"
    separate, aliased = found["runs"]

    assert separate["error"] == "version-counter" and separate["stage"] == "backward"
    assert "modified by an inplace operation" in separate["raised"]["message"]
    assert "is at version 4; expected version 3" in separate["raised"]["message"]
    assert separate["line"].startswith("exercises/part1_inplace.py, line ")
    assert separate["line"].endswith("P[i] = P[i - 1] @ W[i]")
    assert [s["slot"] for s in separate["saved"]] == [0, 1, 2]
    assert separate["final_version"] == 4

    assert aliased["error"] == "leaf-inplace" and aliased["stage"] == "forward"
    assert "leaf Variable that requires grad" in aliased["raised"]["message"]
    assert aliased["line"].endswith("P[0] = W[0]")

    answer = FOLLOWUPS["part1"].model_answer(found)
    assert "expected version 3 and found 4" in answer
    assert "mark_dirty" in answer and "torch.stack" in answer
    assert "Explain this error" in FOLLOWUPS["part1"].question(found)


def test_numpy_part1_on_tensors_shows_the_same_error(worker: Worker, tmp_path: Path) -> None:
    workspace = make_workspace(tmp_path / "ws", flavor="numpy", solved=("part1",))
    found = evidence(worker, workspace, "part1")["part1"]
    assert found["status"] == "error"
    assert found["runs"][0]["line"].endswith("P[i] = P[i - 1] @ W[i]")


def test_code_that_cannot_take_tensors_gets_the_textbook_loop(
        worker: Worker, tmp_path: Path) -> None:
    workspace = make_workspace(tmp_path / "ws", flavor="numpy")
    edit(workspace, "part1", NUMPY_ONLY)
    found = evidence(worker, workspace, "part1")["part1"]
    assert found["status"] == "textbook" and not found["yours_ran"]
    assert {r["error"] for r in found["textbook"]} == {"version-counter", "leaf-inplace"}
    textbook_line = found["textbook"][0]["line"]
    assert textbook_line.endswith("P[i] = P[i - 1] @ W[i]")
    assert not textbook_line.startswith("exercises/")  # the textbook's file, not theirs
    assert "did not run on torch tensors" in FOLLOWUPS["part1"].question(found)


def test_measurements_behind_the_later_questions(worker: Worker, tmp_path: Path) -> None:
    workspace = make_workspace(tmp_path / "ws", solved=("part1", "part2", "part3", "part4"))
    found = evidence(worker, workspace, "part2", "part3", "part4")

    assert found["part2"] == {"status": "measured", "count": 6, "bytes": 6 * 9 * 8, "n": 4,
                              "d": 3}
    norms = found["part3"]["norms"]
    assert all(n > 0 for n in norms[:3]) and norms[3:] == [0.0, 0.0]
    rows = found["part4"]["rows"]
    assert [(r["n"], r["levels"], r["sequential_depth"]) for r in rows] == [(8, 3, 7),
                                                                          (64, 6, 63)]
    assert rows[0]["flops"] == 17 * 2 * 4**3  # 7 + 6 + 4 matmuls of 4 x 4 matrices
    assert "17 matmul" not in FOLLOWUPS["part4"].model_answer(found["part4"])
    assert "2176 matmul flops in 3 levels" in FOLLOWUPS["part4"].model_answer(found["part4"])


def test_a_broken_demonstration_is_unavailable_not_a_crash(
        worker: Worker, tmp_path: Path) -> None:
    workspace = make_workspace(tmp_path / "ws")
    edit(workspace, "part3", BROKEN_BACKWARD)
    found = evidence(worker, workspace, "part3")["part3"]
    assert found == {"status": "unavailable", "why": "still thinking"}
    assert "O(N D^3)" in FOLLOWUPS["part3"].model_answer(found)


def test_part2_followup_is_torch_only() -> None:
    assert followup_for("part2", "numpy") is None
    assert followup_for("part1", "numpy") is not None
