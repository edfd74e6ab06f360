"""Rounds as data: a round defined only in a temporary folder (no edit of the engine) is listed,
initialised, graded, hinted, rehearsed, self-checked and batch-graded like the installed ones;
round data is validated with errors that name the file; the installed rounds are listed."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner, Result
from tiny_round import ROUND_ID, write_tiny_round

import grader.runner
from grader.checks.table import checks_for
from grader.cli import cli
from grader.engine.rounds import EXTRA_ROUNDS_ENV, Round, RoundError, installed
from grader.runner import Worker

from helpers import NO_SANDBOX, LentWorker, lend_pool, needs_sandbox, run_grader, validate_run_json


@pytest.fixture(scope="module")
def tiny_worker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Worker]:
    """GRADER_ROUNDS_PATH names a folder holding the tiny round, for this module and for the
    worker it starts (which sees the round only through that variable)."""
    folder = tmp_path_factory.mktemp("coach-rounds")
    write_tiny_round(folder)
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(EXTRA_ROUNDS_ENV, str(folder))
        with Worker() as worker:
            yield worker


@pytest.fixture
def runner(tiny_worker: Worker, monkeypatch: pytest.MonkeyPatch) -> CliRunner:
    monkeypatch.setattr(grader.runner, "Worker", lambda **_: LentWorker(tiny_worker))
    return CliRunner(env={"COLUMNS": "120"})


def invoke(runner: CliRunner, *args: str | Path, input: str | None = None) -> Result:
    return runner.invoke(cli, [str(a) for a in args], input=input, catch_exceptions=False)


def test_a_round_in_a_folder_of_its_own_is_listed(runner: CliRunner) -> None:
    listed = invoke(runner, "rounds")
    assert listed.exit_code == 0
    assert "prefix-products" in listed.output and ROUND_ID in listed.output
    row = next(line for line in listed.output.splitlines() if ROUND_ID in line)
    assert "A tiny round for the tests" in row and "numpy, torch" in row


def test_init_check_and_hint_work_for_the_new_round(runner: CliRunner, tmp_path: Path) -> None:
    made = invoke(runner, "init", "--round", ROUND_ID, tmp_path / "ws")
    assert made.exit_code == 0, made.output
    assert "Next: cd" in made.output and "grader check part1" in made.output
    config = (tmp_path / "ws" / "grader.toml").read_text()
    assert f'round = "{ROUND_ID}"' in config and 'flavor = "numpy"' in config

    stub = invoke(runner, "check", "--json", "--workspace", tmp_path / "ws")
    assert stub.exit_code == 1
    doc = json.loads(stub.stdout)
    validate_run_json(doc)
    assert doc["round"] == ROUND_ID and doc["score"] == 0

    (tmp_path / "ws" / "exercises" / "part1_sum.py").write_text(
        "def total(x):\n    return x[1:].sum()\n")
    wrong = json.loads(invoke(runner, "check", "--json", "--workspace",
                              tmp_path / "ws").stdout)
    correctness = wrong["parts"][0]["checks"][0]
    assert correctness["status"] == "failed"
    # A one-statement function: its line beside the reference's would be the answer, so no
    # lines apart (apart.py); the round's listed mistake names it, and the one change to the
    # candidate's own line that makes it right (mutants.repair) shows where.
    assert correctness["hint"] == (
        "the first entry is left out: start the sum at x[0]. Your total is right in every "
        "failing case once your `return x[1:].sum()` reads `return x[0:].sum()` (that one "
        "change, tried in your own code).")

    (tmp_path / "ws" / "exercises" / "part1_sum.py").write_text(
        "def total(x):\n    return x.sum()\n")
    right = invoke(runner, "check", "--workspace", tmp_path / "ws")
    assert right.exit_code == 0 and "Score 10.0/10.0" in right.output

    hints = [invoke(runner, "hint", "part1", "--workspace", tmp_path / "ws").output
             for _ in range(5)]
    assert "hint 3/4: near-solution" in hints[2]
    assert "hint 4/4: one more" in hints[3] and "last hint" in hints[3]
    assert hints[4] == hints[3]


def test_part_names_are_checked_against_the_workspace_round(runner: CliRunner,
                                                             tmp_path: Path) -> None:
    invoke(runner, "init", "--round", ROUND_ID, tmp_path / "ws")
    result = invoke(runner, "check", "part2", "--workspace", tmp_path / "ws")
    assert result.exit_code == 2
    assert f"part2: not a part of round {ROUND_ID}" in result.output
    assert "its parts: part1" in result.output


def test_an_unknown_round_is_a_usage_error_listing_the_installed_ones(runner: CliRunner,
                                                                      tmp_path: Path) -> None:
    result = invoke(runner, "init", "--round", "chess", tmp_path / "ws")
    assert result.exit_code == 2
    assert "unknown round 'chess'" in result.output and "prefix-products" in result.output
    assert not (tmp_path / "ws").exists()


def test_a_mock_round_of_the_new_round_asks_its_follow_up(runner: CliRunner, tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch
                                                          ) -> None:
    from grader import cli as cli_module

    invoke(runner, "init", "--round", ROUND_ID, tmp_path / "ws")
    (tmp_path / "ws" / "exercises" / "part1_sum.py").write_text(
        "def total(x):\n    return x.sum()\n")
    assert invoke(runner, "mock", "start", "--workspace", tmp_path / "ws").exit_code == 0
    monkeypatch.setattr(cli_module, "someone_can_answer", lambda needs_screen=False: True)
    passing = invoke(runner, "check", "--workspace", tmp_path / "ws", input="three\n\n")
    assert "What is the sum of three ones?" in passing.output
    assert "Your code said 3.0." in passing.output
    ended = json.loads(invoke(runner, "mock", "end", "--json", "--workspace",
                              tmp_path / "ws").stdout)
    assert ended["round"] == ROUND_ID and ended["followups"][0]["answer"] == "three"


def test_explain_lists_and_shows_the_rounds_own_topics(runner: CliRunner) -> None:
    listed = invoke(runner, "explain", "--round", ROUND_ID)
    assert "sums" in listed.output and "version-counter" not in listed.output
    shown = invoke(runner, "explain", "--round", ROUND_ID, "sums")
    assert "A sum adds every entry." in shown.output and "» sum: 6" in shown.output


SUBMISSIONS = {"good": "return x.sum()", "bad": "return x[1:].sum()"}


def graded_in_the_sandbox(tmp: pytest.TempPathFactory) -> subprocess.CompletedProcess[str]:
    """A good and a bad submission of the tiny round graded by `grader grade --json` in the
    sandbox, from a folder with no instructor grader.toml (run once per test process: the
    round is named to the command by GRADER_ROUNDS_PATH alone)."""
    rounds, root = tmp.mktemp("coach-rounds-ahead"), tmp.mktemp("tiny-class")
    write_tiny_round(rounds)
    for name, body in SUBMISSIONS.items():
        (root / "class" / name).mkdir(parents=True)
        (root / "class" / name / "part1_sum.py").write_text(f"def total(x):\n    {body}\n")
    return run_grader("grade", root / "class", "--round", ROUND_ID, "--json", "--jobs", "1",
                      cwd=root, env={EXTRA_ROUNDS_ENV: str(rounds)})


JOBS = () if NO_SANDBOX else (graded_in_the_sandbox,)


def test_selfcheck_runs_on_the_new_round(tiny_worker: Worker, tmp_path: Path,
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    lend_pool(monkeypatch, lambda: LentWorker(tiny_worker))
    monkeypatch.chdir(tmp_path)  # no instructor grader.toml here: --round decides
    checked = CliRunner().invoke(cli, ["selfcheck", "--round", ROUND_ID, "--jobs", "1"])
    assert checked.exit_code == 0, checked.output
    assert "selfcheck passed" in checked.output


@pytest.mark.slow
@needs_sandbox
def test_grade_runs_on_the_new_round_in_the_sandbox(grading, runner: CliRunner,  # type: ignore[no-untyped-def]
                                                    tmp_path: Path) -> None:
    graded = grading.once(graded_in_the_sandbox)
    assert graded.returncode == 0, graded.stderr
    doc = json.loads(graded.stdout)
    assert doc["round"] == ROUND_ID and doc["sandboxed"] is True
    scores = {Path(row["path"]).name: row["score"] for row in doc["submissions"]}
    assert scores == {"good": 10.0, "bad": scores["bad"]} and scores["bad"] < 10.0
    elsewhere = invoke(runner, "grade", tmp_path, "--round", ROUND_ID, "--config",
                       Path(__file__).parents[1] / "grader.toml")
    assert elsewhere.exit_code == 2 and "is for round prefix-products" in elsewhere.output


def test_round_data_errors_name_the_file(tmp_path: Path) -> None:
    root = write_tiny_round(tmp_path)
    toml = root / "round.toml"
    toml.write_text(toml.read_text().replace('file = "part1_sum.py"', 'file = "sum.txt"'))
    with pytest.raises(RoundError, match=r"round.toml: parts\[0\]: file must be a .py file"):
        Round.load(root)
    with pytest.raises(RoundError, match="is not a round"):
        Round.load(tmp_path)


@pytest.mark.parametrize(("name", "text", "says"), [
    ("round.toml", "summary = " + "[" * 3000 + "]" * 3000 + "\n",
     "not valid TOML: nested too deep to read"),
    ("checks.toml", "[[check]]\nid = " + "{a = " * 3000 + "1" + "}" * 3000 + "\n",
     "not valid TOML: nested too deep to read"),
    ("round.toml", b"title = '\xff'\n", "not UTF-8 text"),
], ids=["round-nested", "checks-nested", "round-not-utf8"])
def test_a_round_file_that_is_no_document_is_one_error_naming_it(
        tmp_path: Path, name: str, text: str | bytes, says: str) -> None:
    """A round author's file that no parser can read (nested past its recursion, not text) is
    a RoundError naming the file, as a syntax error is, never a traceback."""
    root = write_tiny_round(tmp_path)
    target = root / name
    if isinstance(text, bytes):
        target.write_bytes(text)
    else:
        target.write_text(text)
    with pytest.raises(RoundError, match=f"{name}: {says}"):
        checks_for(Round.load(root), "part1", "numpy")


def test_check_table_errors_name_the_check(tmp_path: Path) -> None:
    from grader.checks.table import round_checks

    root = write_tiny_round(tmp_path)
    checks = root / "checks.toml"
    checks.write_text(checks.read_text().replace('truth = "truth"', 'truth = "nope"\ncolour = 1'))
    with pytest.raises(RoundError, match="part1.correctness: truth = 'nope': checks.py has no"):
        round_checks(Round.load(root))


def test_the_installed_rounds() -> None:
    rounds = installed()
    assert list(rounds)[0] == "prefix-products"
    for round_ in rounds.values():
        assert round_.parts and round_.flavors and round_.minutes > 0
        for part in round_.parts:
            assert len(part.hints) >= 3, (round_.id, part.id)


@pytest.mark.parametrize("round_id", sorted(installed()))
def test_every_installed_check_is_measured_where_its_row_says(round_id: str) -> None:
    """A request that asks for no timed rounds skips a check by its row (Check.measured), so
    each shipped plan, in each flavor, must be measured in timed rounds exactly where its row
    says; and some are (the CPU-time checks, the GPU timing)."""
    from grader.checks.base import Context
    from grader.checks.table import round_checks

    found = {(c.id, flavor): (c.measured, c.plan(Context(1, flavor, c.id, "cpu")).measured
                              is not None)
             for c in round_checks(installed()[round_id]) for flavor in c.flavors}
    assert {key for key, (said, made) in found.items() if said != made} == set()
    if round_id in ("prefix-products", "matmul-grad", "mlp-backprop", "normalization"):
        assert any(said for said, _ in found.values())


def test_installed_rounds_are_their_folders_listed_by_order(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No list to keep in step: every folder of grader/rounds with a round.toml is a round,
    listed by its `order`, then by id; a coach's round without one comes after them, and one
    with a lower order before them."""
    from grader.engine.rounds import ROUND_FILE, ROUNDS_DIR, _all_rounds

    shipped = sorted(p.name for p in ROUNDS_DIR.iterdir() if (p / ROUND_FILE).is_file())
    first = write_tiny_round(tmp_path / "first")
    text = (first / ROUND_FILE).read_text().replace(f'id = "{ROUND_ID}"', 'id = "aaa-first"')
    (first / ROUND_FILE).write_text(text.replace("minutes = 5\n", "minutes = 5\norder = 0\n"))
    write_tiny_round(tmp_path / "last")
    monkeypatch.setenv(EXTRA_ROUNDS_ENV, f"{tmp_path / 'last'}:{first}")
    _all_rounds.cache_clear()
    try:
        listed = list(installed())
    finally:
        _all_rounds.cache_clear()
    assert sorted(listed[1:-1]) == shipped and len(shipped) >= 5
    assert listed[0] == "aaa-first" and listed[-1] == ROUND_ID
    assert listed[1:6] == ["prefix-products", "matmul-grad", "mlp-backprop", "gradient-check",
                           "autograd-pitfalls"]


SMALLEST = {
    "round.toml": '''\
id = "sum-squares"
title = "Sum of squares"
summary = "total(x) = (x ** 2).sum()"
flavors = ["numpy"]
minutes = 5

[[parts]]
id = "part1"
title = "Sum of squares"
file = "part1_sum.py"
functions = ["total"]
weight = 10
budget = 5
hints = ["Square, then add.", "x * x squares each entry.", "return (x * x).sum()"]

[[check]]
id = "part1.correctness"
kind = "correctness"
title = "Sums every entry's square"
points = 3
function = "total"
cases = "vectors"
args = ["x"]
truth = "truth"
name = "total"
hint = "Square every entry of x, then add them."
''',
    "checks.py": '''\
import numpy as np

from grader.round_api.judge import Case


def vectors(rng):
    return [Case({"x": rng.standard_normal(n)}, (("n", n),)) for n in (1, 3, 8)]


def truth(case):
    return np.asarray((case["x"] ** 2).sum())
''',
    "stubs/numpy/part1_sum.py": "def total(x):\n    raise NotImplementedError\n",
    "reference/numpy/part1_sum.py": "def total(x):\n    return (x * x).sum()\n",
}


@pytest.mark.slow
def test_the_smallest_round_is_four_files(tmp_path: Path) -> None:
    """Its table in round.toml, its truth, a stub and a reference: no checks.toml, no
    probes.py, no __init__.py. selfcheck passes it; a workspace's check grades the stub 0
    and the reference in full."""
    for name, text in SMALLEST.items():
        (tmp_path / "rounds" / "sum-squares" / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "rounds" / "sum-squares" / name).write_text(text)
    env = {EXTRA_ROUNDS_ENV: str(tmp_path / "rounds")}
    checked = run_grader("selfcheck", "--round", "sum-squares", cwd=tmp_path, env=env)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    made = run_grader("init", "--round", "sum-squares", tmp_path / "ws", cwd=tmp_path, env=env)
    assert made.returncode == 0, made.stderr
    stub = run_grader("check", "--json", cwd=tmp_path / "ws", env=env)
    assert (stub.returncode, json.loads(stub.stdout)["score"]) == (1, 0.0)
    (tmp_path / "ws" / "exercises" / "part1_sum.py").write_text(SMALLEST[
        "reference/numpy/part1_sum.py"])
    solved = run_grader("check", "--json", cwd=tmp_path / "ws", env=env)
    assert (solved.returncode, json.loads(solved.stdout)["score"]) == (0, 10.0)


def test_a_round_whose_table_is_in_two_places_or_malformed_is_one_line(tmp_path: Path) -> None:
    folder = tmp_path / "rounds" / "sum-squares"
    for name, text in SMALLEST.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(text)
    (folder / "checks.toml").write_text("")
    env = {EXTRA_ROUNDS_ENV: str(tmp_path / "rounds")}
    both = run_grader("selfcheck", "--round", "sum-squares", cwd=tmp_path, env=env)
    assert both.returncode == 1 and "Traceback" not in both.stderr
    assert "round.toml: check belong in checks.toml when the round has one" \
        in both.stdout.replace("\n", "")
    (folder / "checks.toml").unlink()
    (folder / "round.toml").write_text("colour = 1\n" + SMALLEST["round.toml"])
    listed = run_grader("rounds", cwd=tmp_path, env=env)
    assert (listed.returncode, listed.stderr) == (
        1, f"Error: {folder / 'round.toml'}: unknown key(s) colour\n")
