"""The interviewer's follow-ups on real candidate code, run through the runner like any check:
the real torch errors from an in-place Part 1 (and the textbook loop's, shown from a child that
never ran candidate code), and the live measurements behind the questions on Parts 2 to 4."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from mock_support import edit, make_workspace

from grader.checks.followups import followup_for, model_answer, question
from grader.engine.workspace import Workspace
from grader.runner import Request

from helpers import PREFIX

NUMPY_ONLY = '''
import numpy as np

def prefix_products_out(W, P):
    W = np.asarray(W)            # fails on a tensor that requires grad
    P[0] = W[0]
    for i in range(1, W.shape[0]):
        P[i] = P[i - 1] @ W[i]
    return P
'''

WRITES_W = '''
def prefix_products_out(W, P):
    W[0] = W[0] * 1.0            # writes into the leaf, whatever P is
    P[0] = W[0]
    for i in range(1, W.shape[0]):
        P[i] = P[i - 1] @ W[i]
    return P
'''

BROKEN_BACKWARD = '''
def prefix_products_backward(W, dP):
    raise RuntimeError("still thinking")
'''


def evidence(grading, workspace: Workspace, *parts: str) -> dict[str, Any]:
    return grading.worker.follow_up(Request(
        id="followup", root=str(workspace.root), round=workspace.round.id,
        flavor=workspace.flavor, parts=list(parts), seed=1))


def words(part: str, found: dict[str, Any], flavor: str = "torch") -> tuple[str, str]:
    followup = followup_for(PREFIX, part, flavor)
    assert followup is not None
    return question(followup, found), model_answer(followup, found)


def test_in_place_part1_meets_the_version_counter_and_leaf_errors(grading,
                                                                  tmp_path: Path) -> None:
    workspace = make_workspace(tmp_path / "ws", solved=("part1",))
    found = evidence(grading, workspace, "part1")["part1"]
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

    assert [s["title"] for s in found["shown"]] == ["The interviewer runs your code"] * 2
    asked, answer = words("part1", found)
    assert "expected version 3 and found 4" in answer
    assert "mark_dirty" in answer and "torch.stack" in answer
    assert "A leaf is a tensor" in answer  # the leaf-inplace topic, read from its file
    assert " ".join(asked.split()) == (
        "The interviewer used your prefix_products_out on a W that requires grad. With P is W "
        "your forward raised; with a separate P the error came when the interviewer called "
        "backward. Explain this error in your own words: what does autograd keep for backward, "
        "what did your code change, how does torch notice, and how would you fix it?")


def test_an_error_raised_in_the_forward_is_not_said_to_come_from_backward(
        grading, tmp_path: Path) -> None:
    """Issue 24: the question said the interviewer "called backward" when the candidate's
    forward raised; where it was raised comes from the probe's record."""
    workspace = make_workspace(tmp_path / "ws")
    edit(workspace, "part1", WRITES_W)
    found = evidence(grading, workspace, "part1")["part1"]
    assert [(r["error"], r["stage"]) for r in found["runs"]] == [("leaf-inplace", "forward")] * 2
    asked = " ".join(words("part1", found)[0].split())
    assert asked.startswith("The interviewer used your prefix_products_out on a W that requires "
                            "grad. Your forward raised this error itself, before anything "
                            "called backward. Explain this error")
    assert "when the interviewer called backward" not in asked


def test_numpy_part1_on_tensors_shows_the_same_error(grading, tmp_path: Path) -> None:
    workspace = make_workspace(tmp_path / "ws", flavor="numpy", solved=("part1",))
    found = evidence(grading, workspace, "part1")["part1"]
    assert found["question"] == ["question", "raised in forward and backward", "explain yours"]
    assert found["runs"][0]["line"].endswith("P[i] = P[i - 1] @ W[i]")


def test_code_that_cannot_take_tensors_gets_the_textbook_loop(grading, tmp_path: Path) -> None:
    workspace = make_workspace(tmp_path / "ws", flavor="numpy")
    edit(workspace, "part1", NUMPY_ONLY)
    found = evidence(grading, workspace, "part1")["part1"]
    assert found["question"] == "question when yours failed"
    assert {r["error"] for r in found["runs"]} == {"version-counter", "leaf-inplace"}
    textbook_line = found["runs"][0]["line"]
    assert textbook_line.endswith("P[i] = P[i - 1] @ W[i]")
    assert not textbook_line.startswith("exercises/")  # the textbook's file, not theirs
    assert found["shown"][0]["title"] == "The interviewer runs the textbook loop"
    assert "did not run on torch tensors" in words("part1", found, "numpy")[0]
    assert "did not run on torch tensors" in found["note"]


def test_measurements_behind_the_later_questions(grading, tmp_path: Path) -> None:
    workspace = make_workspace(tmp_path / "ws", solved=("part1", "part2", "part3", "part4"))
    found = evidence(grading, workspace, "part2", "part3", "part4")

    assert found["part2"]["values"] == {"count": 6, "bytes": 6 * 9 * 8, "n": 4, "d": 3,
                                        "raised": None}
    assert "autograd saved 6 tensors, 432 bytes" in words("part2", found["part2"])[1]
    norms = found["part3"]["norms"]
    assert all(n > 0 for n in norms[:3]) and norms[3:] == [0.0, 0.0]
    assert [(r["n"], r["levels"]) for r in found["part4"]["rows"]] == [(8, 3), (64, 6)]
    assert found["part4"]["rows"][0]["flops"] == 17 * 2 * 4**3  # 7 + 6 + 4 matmuls of 4x4
    answer = words("part4", found["part4"])[1]
    assert "2176 matmul flops in 3 levels; the loop 896 flops in 7 dependent steps" in answer


def test_a_broken_demonstration_is_unavailable_not_a_crash(grading, tmp_path: Path) -> None:
    workspace = make_workspace(tmp_path / "ws")
    edit(workspace, "part3", BROKEN_BACKWARD)
    found = evidence(grading, workspace, "part3")["part3"]
    assert found == {"status": "unavailable", "why": "still thinking"}
    answer = words("part3", found)[1]
    assert "O(N D^3)" in answer and "Live, on your code" not in answer


SPINS = '''
def prefix_products_backward(W, dP):
    while True:
        pass
'''


def test_a_demonstration_that_never_ends_is_stopped_like_a_check(grading,
                                                                 tmp_path: Path) -> None:
    """Its child is held to the check timeout in CPU time, as a check's is, and the follow-up
    says so instead of hanging the round's end. On a machine so busy that the child gets less
    than a tenth of a CPU, the clock's backstop comes first, and the follow-up says that the
    machine was too busy instead."""
    workspace = make_workspace(tmp_path / "ws")
    edit(workspace, "part3", SPINS)
    found = grading.worker.follow_up(Request(
        id="followup", root=str(workspace.root), round=workspace.round.id,
        flavor=workspace.flavor, parts=["part3"], seed=1, timeout_s=1.0))["part3"]
    assert found["status"] == "unavailable"
    assert found["why"].startswith(("did not finish within 1 s of CPU time",
                                    "the machine was too busy to judge this")), found


def test_part2_followup_is_torch_only() -> None:
    assert followup_for(PREFIX, "part2", "numpy") is None
    assert followup_for(PREFIX, "part1", "numpy") is not None
