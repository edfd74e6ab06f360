"""The mlp-backprop round's own promises, beyond the solution matrix: the truth's ReLU
convention, inputs that really hit it, every known slip told apart from the truth, a learning
check that holds for any seed, and follow-ups that measure what their answers say."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
from conftest import Grading

from grader.checks.cases import Case
from grader.checks.compare import tree_matches
from grader.checks.followups import followup_for, model_answer
from grader.checks.table import MistakeBook, load_module
from grader.engine.references import load_reference_part
from grader.engine.rounds import get_round
from grader.runner import Request

from helpers import write_workspace

ROUND = get_round("mlp-backprop")
JUDGE = load_module(ROUND, "checks")


def rng(seed: int = 0) -> np.random.Generator:
    return np.random.default_rng(seed)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_kink_cases_hit_exact_zeros_where_the_gate_decides(dtype: str) -> None:
    for case in [c for c in JUDGE.kinks(rng()) if c.dtype == dtype]:
        z = np.asarray(case["X"]) @ np.asarray(case["W1"]) + np.asarray(case["b1"])
        assert (z == 0).any() and (z > 0).any() and (z < 0).any()
        truth = JUDGE.backward_of(case)
        assert tree_matches(truth, JUDGE._backward(case, gate="z > 0"), dtype)
        assert not tree_matches(truth, JUDGE.gate_open_at_zero(case), dtype)


def test_the_truth_closes_the_gate_at_zero_as_torch_relu_does() -> None:
    """Upstream gradient on the row of an exact zero only: torch gives that unit's bias no
    gradient at all, the z >= 0 gate does."""
    case = JUDGE.kinks(rng())[0]
    row, unit = np.argwhere(case["X"] @ case["W1"] + case["b1"] == 0)[0]
    only_there = np.zeros_like(case["dlogits"])
    only_there[row] = 1.0
    focused = Case({**case.inputs, "dlogits": only_there}, case.dims)
    assert JUDGE.backward_of(focused)["db1"][unit] == 0.0
    assert JUDGE.gate_open_at_zero(focused)["db1"][unit] != 0.0


def test_every_reproduced_slip_differs_from_the_truth() -> None:
    """A slip that equals the truth on every case could never be named (or would name a right
    answer)."""
    import tomllib

    table = tomllib.loads((ROUND.folder / "checks.toml").read_text())
    book = MistakeBook(table, JUDGE, "checks.toml")
    makers = {"forward": (JUDGE.networks, JUDGE.logits_of),
              "loss": (JUDGE.losses, JUDGE.loss_of),
              "sgd": (JUDGE.sgd_cases, JUDGE.sgd_of),
              "train": (JUDGE.trajectories, JUDGE.training_of)}
    for catalogue, (cases, truth) in makers.items():
        made = cases(rng())
        for name in book.catalogues[catalogue]:
            entry = table["mistakes"][name]
            if "output" not in entry:
                continue
            slip = getattr(JUDGE, entry["output"])
            assert any(not tree_matches(slip(c), truth(c), c.dtype) for c in made), name
    for name in book.catalogues["backward"]:
        entry = table["mistakes"][name]
        if "output" in entry:
            slip = getattr(JUDGE, entry["output"])
            made = JUDGE.networks(rng()) + JUDGE.kinks(rng())
            assert any(not tree_matches(slip(c), JUDGE.backward_of(c), c.dtype)
                       for c in made), name


@pytest.mark.parametrize("seed", range(8))
def test_the_reference_learns_the_clusters_of_any_seed(seed: int) -> None:
    train = load_reference_part(ROUND, ROUND.part("part4"), "numpy").train
    for case in JUDGE.separable(rng(seed)):
        params, losses = train({n: case[n] for n in JUDGE.PARAMS}, case["X"], case["y"],
                               case.extra["lr"], case.extra["steps"])
        assert losses[-1] < 0.2 * losses[0]
        assert JUDGE._accuracy(case, params) == 1.0


@pytest.fixture(scope="module")
def evidence(grading: Grading, tmp_path_factory: pytest.TempPathFactory
             ) -> dict[str, dict[str, Any]]:
    root = write_workspace(tmp_path_factory.mktemp("mlp-followups"), "numpy", "reference",
                           round_=ROUND)
    return grading.worker.follow_up(Request(
        id="mlp-followups", root=str(root), round=ROUND.id, flavor="numpy",
        parts=[p.id for p in ROUND.parts], seed=1))


def test_followups_measure_on_the_candidates_code(evidence: dict[str, dict[str, Any]]) -> None:
    assert {part: e["status"] for part, e in evidence.items()} == {
        "part1": "measured", "part2": "measured", "part3": "measured", "part4": "measured"}
    he, xavier = evidence["part1"]["measured"]["he"], evidence["part1"]["measured"]["xavier"]
    assert min(he["stack"]) > 0.4 and xavier["stack"][-1] < 0.05
    assert evidence["part2"]["values"]["gap"] == "0"
    assert evidence["part3"]["values"]["dead"] == "0"
    assert "lr 5: " in evidence["part4"]["values"]["rows"]
    assert "0 of 16 hidden units dead" not in evidence["part4"]["values"]["rows"].split("lr 5")[1]
    for part, found in evidence.items():
        answer = model_answer(followup_for(ROUND, part, "numpy"), found)
        assert "Live, on your" in answer and "{" not in answer, part


def test_a_failing_demonstration_is_unavailable(grading: Grading, tmp_path: Path) -> None:
    root = write_workspace(tmp_path, "torch", "reference", round_=ROUND)
    (root / "exercises" / "part3_backward.py").write_text(
        "def mlp_backward(params, cache, dlogits):\n    raise RuntimeError('still thinking')\n")
    found = grading.worker.follow_up(Request(id="mlp-broken", root=str(root), round=ROUND.id,
                                             flavor="torch", parts=["part3"], seed=1))
    assert found["part3"] == {"status": "unavailable", "why": "still thinking"}
    answer = model_answer(followup_for(ROUND, "part3", "torch"), found["part3"])
    assert "dead" in answer and "Live, on your" not in answer
