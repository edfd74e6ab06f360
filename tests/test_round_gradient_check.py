"""The gradient-check round beyond its solution matrix: the test functions' exact gradients are
right (the judge's truth), both flavors evaluate them alike, the follow-ups measure what their
answers quote on real code, and the topics' demonstrations print what their text claims."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch

from grader.candidate.explain import run_demos
from grader.checks.followups import followup_for, model_answer
from grader.checks.kinds import central_differences
from grader.checks.table import load_module
from grader.engine.prose import topics
from grader.engine.rounds import get_round

from helpers import solution, write_workspace

ROUND = get_round("gradient-check")
FUNCTIONS = load_module(ROUND, "functions")
GRADIENTS = load_module(ROUND, "gradients")
JUDGE = load_module(ROUND, "checks")
KINDS = ("quadratic", "product", "logsumexp", "cubic", "prefix", "relu", "abs")


@pytest.mark.parametrize("kind", KINDS)
def test_exact_gradients_agree_with_central_differences(kind: str) -> None:
    """The truth every check leans on: each test function's gradient, in float64."""
    shape = (3, 2, 2) if kind == "prefix" else (2, 3)
    spec, x = JUDGE._made(kind, np.random.default_rng(1), shape)
    numeric = central_differences(lambda inputs: float(FUNCTIONS.value(spec, inputs["x"])),
                                  {"x": x}, "x", 1e-6)
    np.testing.assert_allclose(GRADIENTS.gradient(spec, x), numeric, rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("kind", KINDS)
def test_the_torch_functions_are_the_numpy_ones(kind: str) -> None:
    """A candidate in either flavor is handed the same f (and the judge's gradients work on
    either kind of array alike)."""
    spec, x = JUDGE._made(kind, np.random.default_rng(2), (2, 2, 2))
    t = torch.from_numpy(x.copy())
    assert float(FUNCTIONS.value(spec, t)) == pytest.approx(float(FUNCTIONS.value(spec, x)),
                                                            rel=1e-12)
    np.testing.assert_allclose(GRADIENTS.gradient(spec, t).numpy(), GRADIENTS.gradient(spec, x),
                               rtol=1e-12, atol=1e-14)


def test_the_candidate_side_holds_no_gradient_and_no_wrong_entry() -> None:
    """What Part 3's probes receive: the claimed gradient as values, never where it is wrong;
    and the round's candidate-side modules compute no gradient."""
    from grader.checks.base import Context

    assert not hasattr(FUNCTIONS, "gradient")
    assert not any(name.endswith("_grad") for name in vars(FUNCTIONS))
    assert ROUND.candidate_modules == ("functions",)
    ctx = Context(7, "numpy", "part3.wrong_entry", "cpu", 10.0, False, (), ())
    sent = JUDGE.wrong_entry(ctx, {}).args["cases"]
    for case in sent:
        assert set(case["extra"]) >= {"f", "claimed"}
        assert "wrong" not in case["extra"]["f"] and "index" not in case["extra"]


def test_fragile_values_defeat_every_arithmetic_undo() -> None:
    """The restore check's inputs: no round trip by +-eps or +-2 eps gives them back."""
    x = JUDGE.fragile(np.random.default_rng(3), (50,))
    assert JUDGE._round_trip_fails(x, JUDGE.DEFAULT_EPS).all()


def evidence(grading: Any, tmp_path: Path, flavor: str, start: str = "reference",
             files: dict[str, Path] | None = None) -> dict[str, dict[str, Any]]:
    root = write_workspace(tmp_path / flavor, flavor, start, files, ROUND)
    request = grading.request(root, flavor, ["part1", "part2", "part3"], round_id=ROUND.id)
    return grading.worker.follow_up(request)


@pytest.mark.parametrize("flavor", ["numpy", "torch"])
def test_follow_ups_measure_the_references(grading: Any, tmp_path: Path, flavor: str) -> None:
    found = evidence(grading, tmp_path, flavor)
    assert {part: e["status"] for part, e in found.items()} == dict.fromkeys(
        ("part1", "part2", "part3"), "measured")
    one = found["part1"]["values"]
    assert one["drop"] == "100" and one["best64"] in ("1e-05", "1e-06")
    assert float(one["default32"]) > 1e-2 > float(one["low32"])
    assert found["part2"]["values"]["zeros"] == "0"
    assert found["part2"]["values"]["ab"] == found["part2"]["values"]["ba"]
    kink = found["part3"]["values"]["kink"]
    assert kink.startswith("returned ok=True") and "kink" in kink
    assert "float64" in found["part3"]["values"]["single"]
    for part, seen in found.items():
        answer = model_answer(followup_for(ROUND, part, flavor), seen)
        assert "Live, on your" in answer and "{" not in answer


def test_a_forward_difference_falls_ten_times_per_decade(grading: Any, tmp_path: Path) -> None:
    """The follow-up's O(eps) against O(eps^2) is measured on the candidate's own code."""
    forward = solution("part1_forward_difference", ROUND.id)
    found = evidence(grading, tmp_path, "numpy", files=forward.files("numpy"))
    assert found["part1"]["values"]["drop"] == "10"


@pytest.mark.parametrize(("name", "shown"), [
    ("central-differences", "1e-02       1.364e-02       4.530e-05"),
    ("step-size", "float32 spacing at 1: 1.1920929e-07"),
    ("bit-exact-restore", "after the nudge, saved reads 0.100001"),
    ("strided-views", "reshape(-1) shares x's memory: False"),
    ("relative-error", "np.nanmax hides NaN: 0.1"),
    ("kinks", "x = 0: forward 1.000, backward 0.000, central 0.500, analytic 0.0"),
    ("directional-check", "right gradient, 3 directions"),
])
def test_demonstrations_show_what_the_text_claims(name: str, shown: str) -> None:
    printed = "".join(output for _, output in run_demos(topics(ROUND)[name]))
    assert shown in printed
    assert "Error" not in printed
