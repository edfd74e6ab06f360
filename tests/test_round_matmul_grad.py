"""The matmul-grad round beyond its solution matrix: no known mistake is ever named for a right
answer, the follow-ups' live demonstrations tell the candidate's cases apart, and the topics'
demonstrations show what their text claims."""

from __future__ import annotations

import shutil
import tomllib
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from grader.candidate.explain import run_demos
from grader.checks.followups import followup_for, model_answer
from grader.checks.mistakes import diagnose
from grader.checks.table import MistakeBook, load_module
from grader.engine.prose import topics
from grader.engine.rounds import get_round
from grader.runner import Request, Worker

from helpers import SOLUTIONS_DIR, write_workspace

ROUND = get_round("matmul-grad")
CHECKS = load_module(ROUND, "checks")


def test_no_mistake_is_named_for_the_right_answer() -> None:
    data = tomllib.loads((ROUND.folder / "checks.toml").read_text())
    mistakes = tuple(MistakeBook(data, CHECKS, "checks.toml").mistakes.values())
    rng = np.random.default_rng(0)
    cases = CHECKS.plain_cases(rng) + CHECKS.batched_cases(rng)
    for case in cases:
        assert diagnose([(case, CHECKS.gradients(case))], mistakes) is None, case.describe()


@pytest.fixture
def worker(grading) -> Worker:  # type: ignore[no-untyped-def]
    """The session's warm worker: follow-ups of this round need no worker of their own."""
    return grading.worker


def evidence(worker: Worker, root: Path, flavor: str, part: str) -> dict[str, Any]:
    request = Request(id="followup", root=str(root), round=ROUND.id, flavor=flavor,
                      parts=[part], seed=1, kind="followup")
    return worker.follow_up(request)[part]


def answer(part: str, flavor: str, found: dict[str, Any]) -> str:
    followup = followup_for(ROUND, part, flavor)
    assert followup is not None
    return model_answer(followup, found)


@pytest.mark.parametrize("flavor", ["torch", "numpy"])
def test_the_backward_costs_twice_the_forward(worker: Worker, tmp_path: Path,
                                              flavor: str) -> None:
    found = evidence(worker, write_workspace(tmp_path, flavor, round_=ROUND), flavor, "part1")
    assert found["values"]["ratio"] == "2"
    assert "your backward did 2048 (2x)" in answer("part1", flavor, found)


@pytest.mark.parametrize("flavor", ["torch", "numpy"])
def test_the_reference_holds_the_unreduced_gradient(worker: Worker, tmp_path: Path,
                                                    flavor: str) -> None:
    found = evidence(worker, write_workspace(tmp_path, flavor, round_=ROUND), flavor, "part2")
    assert found["answer"] == ["answer", "materialised", "fold"]
    assert "A.reshape(S * M, K)^T" in answer("part2", flavor, found)


@pytest.mark.parametrize(("solution", "piece"), [
    (None, "caught"), ("part3_ctx_attributes", "silent")])
def test_an_in_place_write_after_the_forward(worker: Worker, tmp_path: Path,
                                             solution: str | None, piece: str) -> None:
    root = write_workspace(tmp_path, "torch", round_=ROUND)
    if solution:
        shutil.copy(SOLUTIONS_DIR / ROUND.id / solution / "torch" / "part3_autograd_function.py",
                    root / "exercises")
    found = evidence(worker, root, "torch", "part3")
    assert found["answer"] == [piece, "answer"]
    if piece == "caught":
        (shown,) = found["shown"]
        assert "modified by an inplace operation" in shown["raised"]["message"]
        assert shown["snippet"].splitlines()[3].startswith("A.mul_(2.0)")


@pytest.mark.parametrize(("topic", "shown"), [
    ("matmul-backward", "dA == dC @ B^T: True  shape (2, 3)"),
    ("reduce-to-shape", "-> sum_to_size: (4, 5, 6)"),
    ("reduce-to-shape", "torch sum(dim=()): ()"),
    ("custom-function", "needs_input_grad: (True, False)"),
    ("custom-function", "trying to differentiate twice a function that was marked"),
    ("saved-tensors", "modified by an inplace operation"),
])
def test_topic_demonstrations_show_what_the_text_claims(topic: str, shown: str) -> None:
    printed = "".join(output for _, output in run_demos(topics(ROUND)[topic]))
    assert shown in printed
