"""The instructor's secret (issue 19, item 6: "a pinned seed is a public seed").

Under a secret no seed a candidate is shown (the scorecard's, each failure's "reproduce with",
`--json`'s, Classroom's, Gradescope's) reproduces the hidden inputs without the secret: the
inputs come from a hidden seed, HMAC-SHA256 of the secret over the seed shown (and, where the
instructor asks, the submission's code and a nonce), and that hidden seed appears nowhere.

Every run here is the real command on a known-buggy solution (tests/solutions), graded in the
session's warm worker; what a run's inputs were is read off its failure messages ("first wrong
entry P[1, 0, 0]: yours 0.479207, expected -0.664232"). The hidden seed each run used is
computed here with the secret, to show both that `--seed HIDDEN` without the secret is the run
(so it is the seed that must never be shown) and that it was shown nowhere.
"""

from __future__ import annotations

import base64
import json
import re
from dataclasses import asdict
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

import grader.runner
from grader.cli import cli
from grader.coach import batch
from grader.coach.submissions import Staged
from grader.engine.rounds import installed
from grader.engine.secret import (
    HIDDEN_SEED_BITS,
    NONCE_ENV,
    SECRET_ENV,
    Seeding,
    code_fingerprint,
    instructor_nonce,
    instructor_secret,
    seed_with_secret,
)
from grader.engine.workspace import WorkspaceError, load_config, parse_settings

from helpers import PREFIX, LentWorker, lend_pool, run_owned, solution, write_workspace

BUGGY = solution("part1_reversed_order")  # part1.correctness and .aliasing show their values
SECRETS = ("s3cret", "correct horse battery staple", "clé-ünïcode")
SEEDS = (0, 7, 4242)
VALUES = re.compile(r"yours (\S+), expected (\S+)")


def env(secret: str | None = None, nonce: str | None = None) -> dict[str, str | None]:
    """The command's environment: exactly this secret and nonce (None: unset), whatever the
    developer's environment holds."""
    return {SECRET_ENV: secret, NONCE_ENV: nonce}


def buggy_workspace(tmp_path: Path, name: str, settings: str = "", append: str = "") -> Path:
    root = write_workspace(tmp_path / name, "torch", BUGGY.start, BUGGY.files("torch"))
    if settings:
        with (root / "grader.toml").open("a") as handle:
            handle.write(settings)
    if append:
        with (root / "exercises" / "part1_inplace.py").open("a") as handle:
            handle.write(append)
    return root


def check(runner: CliRunner, root: Path, *args: str, secret: str | None = None,
          nonce: str | None = None) -> Result:
    result = runner.invoke(cli, ["check", "part1", "--workspace", str(root), *args],
                           env=env(secret, nonce), catch_exceptions=False)
    assert result.exit_code == 1, result.output  # the solution is buggy
    return result


def run_json(runner: CliRunner, root: Path, *args: str, secret: str | None = None,
             nonce: str | None = None) -> dict[str, Any]:
    return json.loads(check(runner, root, "--json", *args, secret=secret, nonce=nonce).stdout)


def values(doc: dict[str, Any]) -> list[tuple[str, str]]:
    """The inputs' trace in a run: every (yours, expected) pair its failure messages show."""
    found = [pair for part in doc["parts"] for c in part["checks"]
             for pair in VALUES.findall(c["message"])]
    assert len(found) >= 2, doc  # correctness and aliasing
    return found


def hidden(secret: str, seed: int, root: Path | None = None, nonce: str | None = None) -> int:
    """The seed a run's inputs came from, as only someone with the secret can compute it."""
    code = None if root is None else code_fingerprint(root)
    return seed_with_secret(seed, secret, code=code, nonce=nonce)


def shows_nowhere(number: int, text: str) -> bool:
    return re.search(rf"(?<![\d.]){number}(?!\d)", text) is None


# --- the seeds themselves ---------------------------------------------------------------------

def test_the_hidden_seed_is_never_the_shown_one_and_needs_every_ingredient() -> None:
    for secret in SECRETS:
        seen = set()
        for seed in range(300):
            mixed = seed_with_secret(seed, secret)
            assert mixed != seed and 0 <= mixed < 2**HIDDEN_SEED_BITS + 1
            assert mixed == seed_with_secret(seed, secret)
            assert mixed != seed_with_secret(seed, secret + "x")
            assert mixed != seed_with_secret(seed, secret, code="0" * 64)
            assert mixed != seed_with_secret(seed, secret, nonce="1")
            seen.add(mixed)
        assert len(seen) == 300
    assert all(seed_with_secret(s, None) == s == seed_with_secret(s, "") for s in SEEDS)
    assert seed_with_secret(7, None, code="c", nonce="n") == 7  # nothing hidden, nothing mixed


def test_the_mix_is_an_hmac_of_the_secret_not_a_hash_of_a_concatenation() -> None:
    import hashlib
    import hmac

    message = json.dumps(["grader hidden inputs", 7, None, None]).encode()
    digest = hmac.new(b"s3cret", message, hashlib.sha256).digest()
    assert seed_with_secret(7, "s3cret") == int.from_bytes(digest[:16], "big")
    assert seed_with_secret(7, "s3cret") > 2**64  # far past a search (a value drawn from it
    # must not give it away)
    # Ingredients cannot slide into one another: ("a", "bc") and ("ab", "c") differ.
    assert seed_with_secret(1, "k", code="a", nonce="bc") != \
        seed_with_secret(1, "k", code="ab", nonce="c")


def test_the_environment_wins_over_the_file_and_empty_means_unset() -> None:
    assert instructor_secret("from-file", {SECRET_ENV: "from-env"}) == "from-env"
    assert instructor_secret("from-file", {}) == "from-file"
    assert instructor_secret("from-file", {SECRET_ENV: ""}) == "from-file"
    assert instructor_secret(None, {SECRET_ENV: "from-env"}) == "from-env"
    assert instructor_secret(None, {SECRET_ENV: ""}) is None
    assert instructor_nonce({NONCE_ENV: "run-1"}) == "run-1"
    assert instructor_nonce({NONCE_ENV: ""}) is None and instructor_nonce({}) is None


def test_seeding_follows_the_settings_and_shows_only_the_given_seed(tmp_path: Path) -> None:
    plain = parse_settings({}, "t")
    varying = parse_settings({"vary_inputs": "per-submission", "secret": "f"}, "t")
    assert Seeding.of(5, plain, {}) == Seeding(5)
    assert Seeding.of(5, plain, {NONCE_ENV: "n"}) == Seeding(5)  # a nonce needs a secret
    assert Seeding.of(5, varying, {NONCE_ENV: "n"}) == Seeding(5, "f", "n", True)
    assert Seeding.of(5, varying, {SECRET_ENV: "e"}).secret == "e"
    root = buggy_workspace(tmp_path, "ws")
    for seeding in (Seeding(5, "f"), Seeding(5, "f", "n"), Seeding(5, "f", None, True)):
        seeds = seeding.request_seeds(PREFIX, root)
        assert seeds["seed"] == 5 and seeds["hidden_seed"] not in (None, 5)
        assert seeding.report() == {"seed": 5, "secret": True}
        assert "'f'" not in repr(seeding)
    assert Seeding(5).request_seeds(PREFIX, root) == {"seed": 5, "hidden_seed": None}
    assert Seeding(5).report() == {"seed": 5}
    assert Seeding(4, "f", "run 9", True).words() == \
        "seed 4 with the secret, each submission's code and the nonce 'run 9'"


def test_the_fingerprint_is_of_every_exercise_file_and_reads_no_device(tmp_path: Path) -> None:
    """Every file under exercises/ counts (a table of answers beside unchanged part files
    changes the inputs too); what lies beside exercises/ does not; a link is never read."""
    root = buggy_workspace(tmp_path, "ws")
    first = code_fingerprint(root)
    (root / "grader.toml").write_text('round = "prefix-products"\n')  # not code
    (root / "notes.txt").write_text("not code")
    assert code_fingerprint(root) == first
    cache = root / "exercises" / "__pycache__"
    cache.mkdir(exist_ok=True)
    (cache / "x.cpython-311.pyc").write_bytes(b"compiled")
    assert code_fingerprint(root) == first
    part1 = root / "exercises" / "part1_inplace.py"
    part1.write_text(part1.read_text() + "# a comment\n")
    assert code_fingerprint(root) != first
    edited = code_fingerprint(root)
    (root / "exercises" / "_table.npz").write_bytes(b"answers")
    assert code_fingerprint(root) != edited
    (root / "exercises" / "_table.npz").unlink()
    (root / "exercises" / "deep").mkdir()
    (root / "exercises" / "deep" / "helper.py").write_text("X = 1\n")
    assert code_fingerprint(root) != edited
    (root / "exercises" / "deep" / "helper.py").unlink()
    assert code_fingerprint(root) == edited
    part1.unlink()
    missing = code_fingerprint(root)
    part1.write_text("")
    assert code_fingerprint(root) != missing  # missing is not empty
    part1.unlink()
    part1.symlink_to("/dev/zero")  # would never end if it were read
    assert code_fingerprint(root) not in (missing, edited)


def test_vary_inputs_is_a_validated_setting(tmp_path: Path) -> None:
    assert parse_settings({}, "t").vary_inputs == "never"
    for value in ("never", "per-submission"):
        assert parse_settings({"vary_inputs": value}, "t").vary_inputs == value
    for bad in ("sometimes", 1, True, ["per-submission"]):
        with pytest.raises(WorkspaceError, match="vary_inputs must be one of never, "
                                                 "per-submission"):
            parse_settings({"vary_inputs": bad}, "t")
    config = tmp_path / "grader.toml"
    config.write_text('vary_inputs = "per-submission"\nsecret = "s"\n')
    assert load_config(config).vary_inputs == "per-submission"


def test_the_secret_and_the_hidden_seed_stay_out_of_every_request_text(tmp_path: Path) -> None:
    config = tmp_path / "grader.toml"
    config.write_text('secret = "s3cret"\n')
    settings = load_config(config)
    assert settings.secret == "s3cret" and "s3cret" not in repr(settings)
    staged = Staged(str(tmp_path), tmp_path)
    seeding = Seeding.of(1, settings, {})
    request = batch.GradingConfig(settings, seed=1, timeout_s=5.0, seeding=seeding) \
        .request("r", staged)
    assert request.seed == 1 and request.hidden_seed == seed_with_secret(1, "s3cret")
    assert "s3cret" not in json.dumps(asdict(request))
    assert "s3cret" not in repr(seeding) and "s3cret" not in repr(batch.GradingConfig(
        settings, seed=1, timeout_s=5.0, seeding=seeding))


def test_the_worker_never_sees_the_secret(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(SECRET_ENV, "s3cret")
    monkeypatch.setenv(NONCE_ENV, "n")
    assert SECRET_ENV not in grader.runner._worker_environment()


# --- `grader check`: the property, on the real command ----------------------------------------

@pytest.mark.parametrize(("secret", "seed"), list(zip(SECRETS, SEEDS, strict=True)))
def test_a_shown_seed_reproduces_the_run_only_with_the_secret(
        runner: CliRunner, tmp_path: Path, secret: str, seed: int) -> None:
    root = buggy_workspace(tmp_path, "ws")
    graded = run_json(runner, root, "--seed", str(seed), secret=secret)
    secret_run = json.dumps(graded)
    number = hidden(secret, seed)
    assert graded["seed"] == seed != number
    assert shows_nowhere(number, secret_run)
    for message in (c["message"] for c in graded["parts"][0]["checks"] if "reproduce" in
                    c["message"]):
        assert f"reproduce with `grader check part1 --seed {seed}` and the instructor's " \
               "secret" in message

    # With the same secret, the shown seed is the same run; without it, other inputs.
    assert values(run_json(runner, root, "--seed", str(seed), secret=secret)) == values(graded)
    public = run_json(runner, root, "--seed", str(seed))
    assert set(values(public)).isdisjoint(values(graded))
    assert "instructor's secret" not in json.dumps(public)
    # The seed that would give the hidden inputs away is the hidden one, shown nowhere.
    assert values(run_json(runner, root, "--seed", str(number))) == values(graded)


def test_a_fresh_seed_under_a_secret_is_shown_and_reproduces_with_the_secret(
        runner: CliRunner, tmp_path: Path) -> None:
    root = buggy_workspace(tmp_path, "ws")
    first = run_json(runner, root, secret="s3cret")
    given = first["seed"]
    assert shows_nowhere(hidden("s3cret", given), json.dumps(first))
    assert values(run_json(runner, root, "--seed", str(given), secret="s3cret")) == \
        values(first)
    assert set(values(run_json(runner, root, "--seed", str(given)))).isdisjoint(values(first))


def test_the_secret_of_the_workspace_file_works_like_the_variable(
        runner: CliRunner, tmp_path: Path) -> None:
    root = buggy_workspace(tmp_path, "ws", 'secret = "from-the-file"\n')
    from_file = run_json(runner, root, "--seed", "7")
    assert from_file["seed"] == 7
    elsewhere = buggy_workspace(tmp_path, "plain")
    assert values(run_json(runner, elsewhere, "--seed", "7", secret="from-the-file")) == \
        values(from_file)
    assert values(run_json(runner, root, "--seed", "7", secret="wins")) != values(from_file)


def test_the_scorecard_and_classroom_show_the_given_seed_only(runner: CliRunner,
                                                              tmp_path: Path) -> None:
    root = buggy_workspace(tmp_path, "ws")
    number = hidden("s3cret", 4242)
    text = check(runner, root, "--seed", "4242", secret="s3cret").stdout
    assert "seed 4242 · hidden checks" in text and shows_nowhere(number, text)
    assert "instructor's secret" in text

    line = check(runner, root, "--format", "classroom", "--seed", "4242",
                 secret="s3cret").stdout
    doc = json.loads(base64.b64decode(line.strip(), validate=True))
    assert shows_nowhere(number, json.dumps(doc)) and shows_nowhere(number, line)
    assert {t["test_code"] for t in doc["tests"]} == {"grader check part1 --seed 4242"}
    failed = [t for t in doc["tests"] if "first wrong entry" in t["message"]]
    assert failed and all("and the instructor's secret" in t["message"] for t in failed)
    messages = " ".join(t["message"] for t in failed)
    assert set(VALUES.findall(messages)) == set(values(run_json(
        runner, root, "--seed", "4242", secret="s3cret")))


# --- what varies, and what a coach pins -------------------------------------------------------

PER_SUBMISSION = 'vary_inputs = "per-submission"\n'


def test_per_submission_inputs_follow_the_code_under_a_pinned_seed(runner: CliRunner,
                                                                   tmp_path: Path) -> None:
    first = buggy_workspace(tmp_path, "first", PER_SUBMISSION)
    same = buggy_workspace(tmp_path, "same", PER_SUBMISSION)
    edited = buggy_workspace(tmp_path, "edited", PER_SUBMISSION, append="# resubmitted\n")
    graded = {name: run_json(runner, root, "--seed", "1", secret="s3cret")
              for name, root in (("first", first), ("same", same), ("edited", edited))}
    assert {doc["seed"] for doc in graded.values()} == {1}
    assert values(graded["same"]) == values(graded["first"])  # same code: same inputs
    assert set(values(graded["edited"])).isdisjoint(values(graded["first"]))
    assert shows_nowhere(hidden("s3cret", 1, edited), json.dumps(graded["edited"]))
    # The coach pins everything: the seed, the secret and the same code reproduce it exactly.
    assert values(run_json(runner, edited, "--seed", "1", secret="s3cret")) == \
        values(graded["edited"])
    assert values(run_json(runner, edited, "--seed", str(hidden("s3cret", 1, edited)))) == \
        values(graded["edited"])
    # Without the secret nothing varies: the seed alone is the inputs, as for a candidate.
    assert values(run_json(runner, edited, "--seed", "1")) == \
        values(run_json(runner, first, "--seed", "1"))


def test_pinned_inputs_do_not_follow_the_code(runner: CliRunner, tmp_path: Path) -> None:
    first = buggy_workspace(tmp_path, "first")
    edited = buggy_workspace(tmp_path, "edited", 'vary_inputs = "never"\n',
                             append="# resubmitted\n")
    assert values(run_json(runner, first, "--seed", "1", secret="s3cret")) == \
        values(run_json(runner, edited, "--seed", "1", secret="s3cret"))


def test_a_nonce_varies_the_inputs_per_run_and_pins_them_when_repeated(
        runner: CliRunner, tmp_path: Path) -> None:
    root = buggy_workspace(tmp_path, "ws")
    runs = {nonce: run_json(runner, root, "--seed", "1", secret="s3cret", nonce=nonce)
            for nonce in ("run-1", "run-2", None)}
    assert set(values(runs["run-1"])).isdisjoint(values(runs["run-2"]))
    assert set(values(runs["run-1"])).isdisjoint(values(runs[None]))
    assert values(run_json(runner, root, "--seed", "1", secret="s3cret", nonce="run-1")) == \
        values(runs["run-1"])
    for nonce in ("run-1", "run-2"):
        assert runs[nonce]["seed"] == 1
        assert shows_nowhere(hidden("s3cret", 1, nonce=nonce), json.dumps(runs[nonce]))
    # Without a secret a nonce changes nothing: `--seed` alone still reproduces.
    assert values(run_json(runner, root, "--seed", "1", nonce="run-1")) == \
        values(run_json(runner, root, "--seed", "1"))


# --- `grader grade` and Gradescope: the coach's side ------------------------------------------

def without_durations(doc: dict[str, Any]) -> list[dict[str, Any]]:
    rows = json.loads(json.dumps(doc["submissions"]))
    for check_doc in (c for row in rows for p in row["parts"] for c in p["checks"]):
        del check_doc["duration_s"]
    return rows


def row_values(doc: dict[str, Any]) -> list[tuple[str, str]]:
    return values({"parts": doc["submissions"][0]["parts"]})


def test_a_coach_regrades_every_row_on_the_same_inputs_only_with_the_secret(
        grading, runner: CliRunner, tmp_path: Path,  # type: ignore[no-untyped-def]
        monkeypatch: pytest.MonkeyPatch) -> None:
    """`grade --seed SEED` with the same secret grades every row again on the same inputs
    (per submission too: the staged files fingerprint like the workspace's, so a coach's
    `grade` of a Classroom repository reproduces its `check`); without the secret, others."""
    lend_pool(monkeypatch, lambda: LentWorker(grading.worker), jobs=1)
    sub = buggy_workspace(tmp_path, "ben", PER_SUBMISSION)
    settings = 'flavor = "torch"\nparts = ["part1"]\ntimeout = 30\n' + PER_SUBMISSION
    (tmp_path / "with-secret.toml").write_text(settings + 'secret = "s3cret"\n')
    (tmp_path / "without.toml").write_text(settings)

    def grade(config: str, *args: str, **options: Any) -> dict[str, Any]:
        done = CliRunner().invoke(cli, ["grade", str(sub), "--json", "--config",
                                        str(tmp_path / config), *args], env=env(**options))
        assert done.exit_code == 0, done.output
        return json.loads(done.stdout)

    first = grade("with-secret.toml")  # a fresh seed, mixed with the file's secret
    seed = first["seed"]
    assert set(first) == {"schema_version", "round", "seed", "secret", "sandboxed", "submissions"}
    assert first["secret"] is True
    assert shows_nowhere(hidden("s3cret", seed, sub), json.dumps(first))
    again = grade("with-secret.toml", "--seed", str(seed))
    assert (again["seed"], again["secret"]) == (seed, True)
    assert without_durations(again) == without_durations(first)
    plain = grade("without.toml", "--seed", str(seed))
    assert plain["seed"] == seed and "secret" not in plain
    assert set(row_values(plain)).isdisjoint(row_values(first))
    other = grade("without.toml", "--seed", str(seed), secret="another")
    assert set(row_values(other)).isdisjoint(row_values(first))
    # The same files checked as a workspace under the same seed and secret: the same inputs.
    assert row_values(first) == values(run_json(runner, sub, "--seed", str(seed),
                                                secret="s3cret"))


def test_gradescope_results_show_the_given_seed_only(
        grading, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    lend_pool(monkeypatch, lambda: LentWorker(grading.worker), jobs=1)
    sub = buggy_workspace(tmp_path, "ben")
    config = tmp_path / "grader.toml"
    config.write_text('flavor = "torch"\nparts = ["part1"]\ntimeout = 30\nsecret = "s3cret"\n')
    results = tmp_path / "results.json"
    done = CliRunner().invoke(cli, ["grade", str(sub), "--gradescope", str(results), "--config",
                                    str(config), "--seed", "31"], env=env())
    assert done.exit_code == 0, done.output
    text = results.read_text()
    doc = json.loads(text)
    assert {k: doc["extra_data"][k] for k in ("seed", "secret")} == {"seed": 31, "secret": True}
    assert "given_seed" not in doc["extra_data"]
    assert shows_nowhere(hidden("s3cret", 31), text)
    outputs = " ".join(t["output"] for t in doc["tests"])
    assert "reproduce with `grader check part1 --seed 31` and the instructor's secret" in outputs


def test_the_checks_draw_every_input_through_the_context() -> None:
    """A check that drew its inputs from the public `ctx.seed` instead of `ctx.rng()` would
    hand them to anyone who read the seed shown: no check reads it but to name it."""
    import grader.checks

    sources = [*Path(grader.checks.__file__).parent.glob("*.py"),
               *(r.folder / "checks.py" for r in installed().values())]
    for source in sources:
        for line in source.read_text().splitlines():
            if re.search(r"\bctx\.seed\b", line):
                assert re.search(r"seed \{ctx\.seed\}", line), (source, line)


# --- the Classroom workflow publishes no hidden inputs ----------------------------------------

WORKFLOW = Path(__file__).resolve().parents[1] / "docs" / "github-classroom" / "classroom.yml"


def workflow_step(name: str) -> dict[str, Any]:
    import yaml

    (job,) = yaml.safe_load(WORKFLOW.read_text())["jobs"].values()
    return next(step for step in job["steps"] if step["name"] == name)


def run_step(script: str, cwd: Path, environ: dict[str, str]) -> Any:
    return run_owned(["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", script],
                     cwd=cwd, env=environ, timeout=120)


def test_the_workflow_varies_hidden_inputs_per_submission_and_warns_without_a_secret(
        tmp_path: Path) -> None:
    import os

    done = run_step(workflow_step("Use the instructor's settings")["run"], tmp_path,
                    dict(os.environ))
    assert done.returncode == 0, done.stderr
    assert load_config(tmp_path / "grader.toml").vary_inputs == "per-submission"
    grading = workflow_step("Run the hidden checks")
    assert grading["env"] == {SECRET_ENV: "${{ secrets.GRADER_SECRET }}"}
    assert f"# {NONCE_ENV}: ${{{{ github.run_id }}}}" in WORKFLOW.read_text()
    assert "--seed 1" in grading["run"]

    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "python").write_text("#!/bin/sh\necho result-line\n")
    (bin_dir / "python").chmod(0o755)
    base = {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}", "MAX_SCORE": "100",
            "GITHUB_OUTPUT": str(tmp_path / "out"), "RUNNER_TEMP": str(tmp_path)}
    for secret, warned in (("", True), ("s3cret", False)):
        done = run_step(grading["run"], tmp_path, {**base, SECRET_ENV: secret})
        assert done.returncode == 0, done.stderr
        assert ("::warning::no GRADER_SECRET" in done.stdout) == warned
