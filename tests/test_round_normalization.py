"""The normalization round's own promises, beyond the solution matrix: the initialisers' bands
that a correct sampler passes at every seed and no listed slip does, every known slip told
apart from the truth, the truth's conventions (torch's), follow-ups that measure what their
answers say, and the real CLI on a known-buggy solution and on the references."""

from __future__ import annotations

import json
import math
import tomllib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from click.testing import CliRunner
from conftest import Grading

from grader.checks.base import Context
from grader.checks.cases import Case
from grader.checks.compare import tree_matches
from grader.checks.followups import followup_for, model_answer
from grader.checks.table import MistakeBook, load_module
from grader.cli import cli
from grader.engine.rounds import get_round
from grader.runner import Request

from helpers import SOLUTIONS_DIR, write_workspace

ROUND = get_round("normalization")
JUDGE = load_module(ROUND, "checks")
TABLE = tomllib.loads((ROUND.folder / "checks.toml").read_text())


@pytest.fixture(autouse=True)
def one_thread() -> Iterator[None]:
    """The judge's truths run torch on tiny tensors, where a second thread only spins (the
    worker runs them on one thread too)."""
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


def rng(seed: int = 0) -> np.random.Generator:
    return np.random.default_rng(seed)


def statistics_judge(init: str, seed: int) -> tuple[list[Case], Any]:
    """The statistics check's cases and judge for one seed (its plan, as the engine makes it)."""
    row = next(c for c in TABLE["check"] if c["id"] == f"part1.{init}_statistics")
    book = MistakeBook(TABLE, JUDGE, "checks.toml")
    params = {**TABLE["defaults"], **row,
              "mistakes": list(book.expand(row["mistakes"], row["id"]))}
    plan = JUDGE.init_statistics(Context(seed, "numpy", row["id"]), params)
    cases = [Case(c["inputs"], extra=c["extra"]) for c in plan.args["cases"]]
    return cases, plan.judge


def four_values(rng: np.random.Generator, fan_in: int, fan_out: int,
                variance: float) -> np.ndarray:
    """A normal's mean, mean square and share beyond sqrt(3) standard deviations, from four
    values shuffled by the rng: 2.2 standard deviations on that share, the rest nearer."""
    n = fan_in * fan_out
    far_share, far = math.erfc(math.sqrt(1.5)), 2.2
    near = math.sqrt((1.0 - far_share * far * far) / (1.0 - far_share))
    count = round(far_share * n / 2) * 2
    values = np.concatenate([np.full(count // 2, far), np.full(count // 2, -far),
                             np.full((n - count) // 2, near),
                             np.full(n - count - (n - count) // 2, -near)])
    return rng.permutation(values).reshape(fan_in, fan_out) * math.sqrt(variance)


def observed(cases: list[Case], draw: Any) -> list[dict[str, Any]]:
    samples = []
    for case in cases:
        fan_in, fan_out = case.extra["fan_in"], case.extra["fan_out"]
        sample = draw(np.random.default_rng(case.extra["seed"]), fan_in, fan_out)
        samples.append({"raised": None, "shape": list(sample.shape), "dtype": str(sample.dtype),
                        "sample": sample, "same_seed_same": True, "other_seed_differs": True})
    return samples


def test_the_bands_bound_a_false_failure_below_one_in_a_billion() -> None:
    assert JUDGE.FALSE_FAILURE < 1e-9
    n = 40 * 800  # the smallest weight init_shapes draws
    low, high = JUDGE.second_moment_band(n)
    # Chernoff's bound at the band's edges is ALPHA, for this n and any larger one.
    assert math.exp(-n / 2 * ((high - 1) - math.log(high))) == pytest.approx(JUDGE.ALPHA, rel=1e-6)
    assert math.exp(-n / 2 * ((low - 1) - math.log(low))) == pytest.approx(JUDGE.ALPHA, rel=1e-6)
    assert 0.93 < low < 1 < high < 1.07
    assert math.erfc(JUDGE.mean_band(n, 1.0) * math.sqrt(n) / math.sqrt(2)) == pytest.approx(
        JUDGE.ALPHA, rel=1e-6)
    assert 2 * math.exp(-2 * n * JUDGE.share_band(n) ** 2) == pytest.approx(JUDGE.ALPHA)


@pytest.mark.parametrize("init", ["xavier", "he"])
def test_a_right_sampler_passes_and_every_listed_slip_fails_and_is_named(init: str) -> None:
    variance = JUDGE.VARIANCES[init]
    right = {"normal": lambda g, i, o: g.standard_normal((i, o)) * math.sqrt(variance(i, o)),
             "via normal(scale=)": lambda g, i, o: g.normal(0, math.sqrt(variance(i, o)),
                                                            (i, o))}
    slips = {
        "your variance is 1 / fan_in": lambda g, i, o: g.standard_normal((i, o)) / math.sqrt(i),
        "scaled by the variance itself": lambda g, i, o: g.standard_normal((i, o))
        * variance(i, o),
        "a uniform on [-std, std]": lambda g, i, o: g.uniform(-1, 1, (i, o))
        * math.sqrt(variance(i, o)),
        "the distribution is not a normal": lambda g, i, o: g.uniform(-1, 1, (i, o))
        * math.sqrt(3 * variance(i, o)),
        "must have mean 0": lambda g, i, o: g.standard_normal((i, o)) * math.sqrt(
            variance(i, o)) + 0.05 * math.sqrt(variance(i, o)),
        "the values are not drawn from a normal": lambda g, i, o: four_values(
            g, i, o, variance(i, o)),
    }
    for seed in range(6):
        cases, judge = statistics_judge(init, seed)
        for name, draw in right.items():
            verdict = judge(observed(cases, draw))
            assert verdict.status == "passed", (name, verdict.message)
        for said, draw in slips.items():
            verdict = judge(observed(cases, draw))
            assert verdict.status == "failed" and said in (verdict.hint or ""), (said, verdict)


def test_every_reproduced_slip_differs_from_the_truth() -> None:
    """A slip that equals the truth on every case could never be named (or would name a right
    answer)."""
    book = MistakeBook(TABLE, JUDGE, "checks.toml")
    makers = {"variances": (JUDGE.stacks, JUDGE.variances_of),
              "layernorm-forward": (JUDGE.layernorms, JUDGE.layernorm_of),
              "layernorm-backward": (JUDGE.layernorms, JUDGE.layernorm_backward_of),
              "batchnorm-training": (JUDGE.trainings, JUDGE.batchnorm_of),
              "batchnorm-evaluation": (JUDGE.evaluations, JUDGE.batchnorm_of),
              "batchnorm-running": (JUDGE.running_sequences, JUDGE.running_of),
              "batchnorm-backward": (JUDGE.trainings, JUDGE.batchnorm_backward_of),
              "batchnorm-backward-evaluation": (JUDGE.evaluations,
                                                JUDGE.batchnorm_backward_of)}
    for catalogue, (cases, truth) in makers.items():
        made = [(c, truth(c)) for c in cases(rng())[:6]]  # float64, the smallest shapes first
        for name in book.catalogues[catalogue]:
            entry = TABLE["mistakes"][name]
            if "output" in entry:
                slip = getattr(JUDGE, entry["output"])
                assert any(not tree_matches(slip(c), t, c.dtype) for c, t in made), name
            else:  # a matcher must not take the truth itself for the slip
                match = getattr(JUDGE, entry["match"])
                assert not any(match(c, t) for c, t in made), name


def test_the_truth_keeps_torch_conventions() -> None:
    """Biased variance in the normalisation, unbiased in running_var, momentum as torch's."""
    case = JUDGE.trainings(rng())[0]
    x = np.asarray(case["x"], np.float64)
    m, n = case.extra["momentum"], x.shape[0]
    truth = JUDGE.batchnorm_of(case)
    assert np.allclose(truth["running_var"],
                       (1 - m) * case["running_var"] + m * x.var(axis=0) * n / (n - 1))
    assert np.allclose(truth["running_mean"], (1 - m) * case["running_mean"] + m * x.mean(0))
    xhat = (x - x.mean(0)) / np.sqrt(x.var(axis=0) + case.extra["eps"])
    assert np.allclose(truth["y"], xhat * case["gamma"] + case["beta"])
    evaluation = JUDGE.evaluations(rng())[0]
    assert np.array_equal(JUDGE.batchnorm_of(evaluation)["running_mean"],
                          evaluation["running_mean"])


def test_the_deep_stacks_show_what_the_check_says() -> None:
    he, xavier = (JUDGE.variances_of(c) for c in JUDGE.deep_stacks(rng(3)))
    assert 0.3 < he[-1] / he[0] < 3
    assert np.all(xavier[1:] / xavier[:-1] < 0.75) and xavier[-1] / xavier[0] < 1e-2


@pytest.fixture(scope="module")
def evidence(grading: Grading, tmp_path_factory: pytest.TempPathFactory
             ) -> dict[str, dict[str, Any]]:
    root = write_workspace(tmp_path_factory.mktemp("norm-followups"), "torch", "reference",
                           round_=ROUND)
    return grading.worker.follow_up(Request(
        id="norm-followups", root=str(root), round=ROUND.id, flavor="torch",
        parts=[p.id for p in ROUND.parts], seed=1))


def test_followups_measure_on_the_candidates_code(evidence: dict[str, dict[str, Any]]) -> None:
    assert {part: e["status"] for part, e in evidence.items()} == {
        "part1": "measured", "part2": "measured", "part3": "measured"}
    measured = evidence["part1"]["measured"]
    assert min(measured["he"]) > 0.3 and measured["xavier"][-1] < 0.01
    assert 0.4 < float(evidence["part1"]["values"]["ratio"]) < 0.6
    values = evidence["part2"]["values"]
    assert float(values["layer_gap"]) < 1e-12 and float(values["row_sums"]) < 1e-12
    assert float(values["projections"]) < 1e-12 and float(values["dy_row_sums"]) > 0.1
    assert float(evidence["part3"]["values"]["spread"]) > 0.1
    assert evidence["part3"]["values"]["eval_spread"] == "0"
    for part, found in evidence.items():
        answer = model_answer(followup_for(ROUND, part, "torch"), found)
        assert "Live, on your" in answer and "{" not in answer, part


def test_cli_names_the_reversed_momentum(tmp_path: Path, runner: CliRunner) -> None:
    """The command on a known-buggy Part 3 (the references' full marks are selfcheck's and the
    solution matrix's), at a pinned seed: exactly the checks the slip breaks fail, and the hint
    names it."""
    buggy = write_workspace(tmp_path, "numpy", "reference", {
        "part3_batchnorm.py": SOLUTIONS_DIR / "normalization" / "part3_momentum_reversed"
        / "part3_batchnorm.py"}, round_=ROUND)
    done = runner.invoke(cli, ["check", "part3", "--seed", "7", "--format", "json",
                               "--workspace", str(buggy)])
    assert done.exit_code == 1, done.output
    checks = {c["id"]: c for p in json.loads(done.stdout)["parts"] for c in p["checks"]}
    failed = sorted(i for i, c in checks.items() if c["status"] != "passed")
    assert failed == ["part3.running_statistics", "part3.training"]
    assert checks["part3.training"]["hint"].startswith("the momentum convention is reversed")
    assert "--seed 7" in checks["part3.training"]["message"]
