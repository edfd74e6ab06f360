"""Hints in the flavor a candidate works in: `{{numpy: ... | torch: ...}}` alternatives in a
round's text, checked when the round loads and resolved where a candidate reads them (the
scorecard's hints and `grader hint`)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from tiny_round import write_tiny_round

from grader.checks.table import round_checks
from grader.cli import cli
from grader.engine.flavored import for_flavor, problems
from grader.engine.rounds import Round, RoundError, installed

from helpers import PREFIX, write_workspace

BOTH = ("numpy", "torch")


@pytest.mark.parametrize(("flavor", "shown"), [
    ("numpy", "return np.empty_like(W) at once; then np.empty_like(W) again"),
    ("torch", "return W.new_empty(0, D, D) at once; then torch.empty_like(W) again"),
])
def test_each_flavor_reads_its_own_alternative(flavor: str, shown: str) -> None:
    text = ("return {{numpy: np.empty_like(W) | torch: W.new_empty(0, D, D)}} at once; then "
            "{{torch: torch.empty_like(W)|numpy:np.empty_like(W)}} again")
    assert for_flavor(text, flavor) == shown


def test_text_without_alternatives_is_unchanged() -> None:
    for text in ("", "P[0] = W[0]", "a dict {'a': 1} and a set {1}", "f'{x}'"):
        assert for_flavor(text, "torch") == text
        assert problems(text, BOTH, BOTH) == []


@pytest.mark.parametrize(("text", "says"), [
    ("{{numpy: np.zeros(3)}}", "must give each of numpy, torch"),
    ("{{numpy: a | torch: b | jax: c}}", "no flavor but numpy, torch"),
    ("{{numpy a | torch: b}}", "is not {{flavor: text | flavor: text}}"),
    ("{{numpy: a | numpy: b}}", "is not {{flavor: text | flavor: text}}"),
    ("{{numpy: a | torch: b", "an unmatched double brace"),
    ("numpy: a | torch: b}}", "an unmatched double brace"),
])
def test_malformed_alternatives_are_named(text: str, says: str) -> None:
    (problem,) = problems(text, BOTH, BOTH)
    assert says in problem


def test_a_check_for_one_flavor_needs_only_its_alternative() -> None:
    assert problems("{{torch: torch.empty_like(W)}}", ("torch",), BOTH) == []


def test_a_round_with_a_wrong_alternative_does_not_load(tmp_path: Path) -> None:
    """In a check's hint, in a part's hints: the error names where."""
    root = write_tiny_round(tmp_path)
    checks = root / "checks.toml"
    checks.write_text(checks.read_text().replace('hint = "', 'hint = "use {{numpy: np.sum(x)}} ',
                                                 1))
    with pytest.raises(RoundError, match=r"part1.correctness.*must give each of numpy, torch"):
        round_checks(Round.load(root))

    root = write_tiny_round(tmp_path / "second")
    toml = root / "round.toml"
    toml.write_text(toml.read_text().replace('"Add the entries."',
                                             '"Add {{numpy: a | torch: b | tf: c}}."'))
    with pytest.raises(RoundError, match=r"parts\[0\].hints: .*no flavor but numpy, torch"):
        Round.load(root)


def test_every_installed_text_resolves_whole_in_every_flavor() -> None:
    """No `{{` is left for a candidate to read, whatever the round and flavor."""
    for round_ in installed().values():
        for check in round_checks(round_):
            assert check.flavors
        for part in round_.parts:
            for flavor in part.flavors:
                assert all("{{" not in for_flavor(h, flavor) for h in part.hints), part.id


N_ZERO_FAILS = '''"""Right for N >= 1; with N == 0 it reads W[0] anyway."""


def prefix_products(W):
    if W.ndim != 3 or W.shape[1] != W.shape[2]:
        raise ValueError(f"W must be (N, D, D), got {tuple(W.shape)}")
    products = [W[0]]
    for i in range(1, len(W)):
        products.append(products[-1] @ W[i])
    return products[0][None].repeat(1, 1, 1) if len(W) == 1 else __import__("torch").stack(
        products)
'''


def test_torchs_empty_input_hint_names_torch_not_numpy(tmp_path: Path,
                                                       runner: CliRunner) -> None:
    """A torch part 2 that indexes W[0] with N == 0: its hint says how in torch."""
    root = write_workspace(tmp_path / "ws", "torch", "stubs")
    (root / "exercises" / PREFIX.part("part2").file).write_text(N_ZERO_FAILS)
    done = runner.invoke(cli, ["check", "part2", "--json", "--seed", "2", "--workspace",
                               str(root)])
    checks = {c["id"]: c for c in json.loads(done.stdout)["parts"][0]["checks"]}
    empty = checks["part2.empty"]
    assert empty["status"] == "failed"
    assert "torch.empty_like(W)" in empty["hint"] and "np." not in empty["hint"]
    assert checks["part2.correctness"]["status"] == "passed"
