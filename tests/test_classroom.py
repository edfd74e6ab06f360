"""GitHub Classroom: `grader check --format classroom`, the secret seed, and the workflow.

The CLI runs grade part 1 in the session's warm worker. The workflow's own scripts are run as
GitHub Actions would run them (bash, with GITHUB_OUTPUT and RUNNER_TEMP), except the steps that
need the network.
"""

from __future__ import annotations

import base64
import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import yaml
from click.testing import CliRunner, Result

from grader.checks.base import Context
from grader.checks.table import checks_for
from grader.cli import cli
from grader.coach import classroom
from grader.engine.results import (
    POINT_UNITS,
    CheckResult,
    PartResult,
    RunResult,
    apportion,
    scale_to_weight,
)
from grader.engine.secret import SECRET_ENV
from grader.engine.workspace import load_config

from helpers import PREFIX, REPO, run_owned, write_workspace

CLASSROOM_DIR = REPO / "docs" / "github-classroom"
WORKFLOW = CLASSROOM_DIR / "classroom.yml"
DOC_KEYS = {"version", "status", "max_score", "tests"}
TEST_KEYS = {"name", "status", "score", "message", "test_code", "filename", "line_no",
             "duration"}
PART1_CHECKS = [c.id for c in checks_for(PREFIX, "part1", "torch")]


def check(runner: CliRunner, workspace: Path, *args: str, env: dict[str, str] | None = None
          ) -> Result:
    return runner.invoke(cli, ["check", "part1", "--workspace", str(workspace), *args],
                         env=env, catch_exceptions=False)


def decoded(line: str) -> dict[str, Any]:
    """The reporter's reading of a result: base64, then JSON; and its exact shape."""
    doc = json.loads(base64.b64decode(line.strip(), validate=True))
    assert set(doc) == DOC_KEYS and doc["version"] == 1
    assert doc["status"] in ("pass", "fail", "error")
    for test in doc["tests"]:
        assert set(test) == TEST_KEYS
        assert test["status"] in ("pass", "fail", "error")
        assert isinstance(test["line_no"], int) and isinstance(test["duration"], int)
        assert all(isinstance(test[k], str) for k in ("name", "message", "test_code",
                                                      "filename"))
    return doc


def workspace(tmp_path: Path, name: str, edit: tuple[str, str] | None = None,
              append: str = "") -> Path:
    root = write_workspace(tmp_path / name, "torch")
    part1 = root / "exercises" / "part1_inplace.py"
    text = part1.read_text()
    if edit:
        assert edit[0] in text
        text = text.replace(*edit)
    part1.write_text(text + append)
    return root


def test_a_passing_a_failing_and_a_broken_submission(runner: CliRunner,
                                                     tmp_path: Path) -> None:
    results = {
        "passing": check(runner, workspace(tmp_path, "passing"), "--format", "classroom",
                         "--seed", "5"),
        "failing": check(runner, workspace(tmp_path, "failing", ("P[i - 1] @ W[i]",
                                                                  "W[i] @ P[i - 1]")),
                         "--format", "classroom", "--seed", "5"),
        "broken": check(runner, workspace(tmp_path, "broken", append="\ndef broken(:\n"),
                        "--format", "classroom", "--seed", "5"),
    }
    assert {k: r.exit_code for k, r in results.items()} == \
        {"passing": 0, "failing": 1, "broken": 1}
    assert all(len(r.stdout.splitlines()) == 1 for r in results.values())
    docs = {k: decoded(r.stdout) for k, r in results.items()}

    assert {k: d["status"] for k, d in docs.items()} == \
        {"passing": "pass", "failing": "fail", "broken": "error"}
    for doc in docs.values():
        assert doc["max_score"] == 20.0
        assert [t["name"].rsplit("(", 1)[1].rstrip(")") for t in doc["tests"]] == PART1_CHECKS
        assert {t["filename"] for t in doc["tests"]} == {"exercises/part1_inplace.py"}
        assert {t["test_code"] for t in doc["tests"]} == {"grader check part1 --seed 5"}
        assert {t["line_no"] for t in doc["tests"]} == {0}

    passing = docs["passing"]["tests"]
    assert {t["status"] for t in passing} == {"pass"}
    assert sum(t["score"] for t in passing) == 20.0
    assert passing[0]["name"] == ("part1 In-place forward: Raises ValueError for a malformed W "
                                  "or a P of the wrong shape (part1.validation)")

    failing = {t["name"].rsplit("(", 1)[1].rstrip(")"): t for t in docs["failing"]["tests"]}
    assert failing["part1.correctness"]["status"] == "fail"
    assert failing["part1.correctness"]["score"] == 0.0
    assert "hint: matmul is not commutative" in failing["part1.correctness"]["message"]
    assert failing["part1.validation"]["status"] == "pass"

    broken = docs["broken"]["tests"]
    assert {t["status"] for t in broken} == {"error"} and sum(t["score"] for t in broken) == 0
    assert "SyntaxError" in broken[0]["message"]


def test_format_json_is_json_and_the_two_spellings_cannot_disagree(runner: CliRunner,
                                                                   tmp_path: Path) -> None:
    root = workspace(tmp_path, "ws")
    as_flag = check(runner, root, "--json", "--seed", "3")
    as_format = check(runner, root, "--format", "json", "--seed", "3")
    strip = [{k: v for k, v in c.items() if k != "duration_s"}
             for p in json.loads(as_flag.stdout)["parts"] for c in p["checks"]]
    assert strip == [{k: v for k, v in c.items() if k != "duration_s"}
                     for p in json.loads(as_format.stdout)["parts"] for c in p["checks"]]

    both = runner.invoke(cli, ["check", "--json", "--format", "classroom", "--workspace",
                               str(root)])
    assert both.exit_code == 2
    assert "--json means --format json, not --format classroom" in both.output


def perfect_run(parts: list[str], cuda: bool = False) -> RunResult:
    """Every check of the round passed, scored as the worker scores them, without grading."""
    done = []
    for part_id in parts:
        checks = []
        for spec in checks_for(PREFIX, part_id, "torch"):
            applies = spec.applies(Context(1, "torch", spec.id, cuda=cuda))
            points = spec.points if applies else 0.0
            checks.append(CheckResult(spec.id, spec.title, "passed" if applies else "skipped",
                                      points, points, duration_s=0.0123))
        scale_to_weight(checks, PREFIX.part(part_id).weight)
        done.append(PartResult(part_id, PREFIX.part(part_id).title, checks))
    return RunResult(PREFIX.id, "torch", 1, done)


def test_full_marks_read_exactly_full_marks_in_the_reporters_sum() -> None:
    doc = classroom.document(perfect_run(list(PREFIX.part_ids)))
    total = 0.0
    for test in doc["tests"]:  # the reporter's own order and float arithmetic
        total += test["score"]
    assert total == doc["max_score"] == 100.0
    assert all(t["score"] * POINT_UNITS == int(t["score"] * POINT_UNITS)
               for t in doc["tests"])
    # GPU timing cannot apply without CUDA: worth nothing here, so no test at all.
    assert "part4.timing" not in {t["name"].rsplit("(", 1)[1].rstrip(")") for t in doc["tests"]}
    assert doc["tests"][0]["duration"] == 12


def test_eighths_add_up_to_the_total_exactly() -> None:
    assert apportion([20 / 3] * 3, 20) == [6.75, 6.625, 6.625]
    assert sum(apportion([1 / 7] * 7, 1)) == 1.0
    assert apportion([2.5, 2.5], 5) == [2.5, 2.5]
    parts = [20 * p / 21 for p in (3, 6, 1, 1, 2, 1, 3, 2, 1, 1)]
    assert sum(apportion(parts, 20)) == 20.0


# --- the workflow ------------------------------------------------------------------------

def workflow_steps() -> dict[str, dict[str, Any]]:
    jobs = yaml.safe_load(WORKFLOW.read_text())["jobs"]
    (job,) = jobs.values()
    return {step["name"]: step for step in job["steps"]}


def test_the_workflow_is_the_one_the_readme_describes() -> None:
    document = yaml.safe_load(WORKFLOW.read_text())
    assert document["name"] == "Autograding Tests"
    assert set(document["on"]) == {"push", "repository_dispatch"}
    steps = workflow_steps()
    readme = (CLASSROOM_DIR / "README.md").read_text()
    table = [line.split("|")[1].strip() for line in readme.splitlines()
             if line.startswith("| ") and not line.startswith("| step")]
    assert table == list(steps)
    grading = steps["Run the hidden checks"]
    assert grading["id"] == "grader" and grading["if"] == "always()"
    assert grading["env"] == {SECRET_ENV: "${{ secrets.GRADER_SECRET }}"}
    assert "check --format classroom" in grading["run"]
    reporter = steps["Report the points"]
    assert reporter["uses"] == "classroom-resources/autograding-grading-reporter@v1"
    assert reporter["with"] == {"runners": "grader"}
    assert reporter["env"] == {"GRADER_RESULTS": "${{ steps.grader.outputs.result }}"}
    assert "download.pytorch.org/whl/cpu" in steps["Install CPU torch and the grader"]["run"]


def run_step(script: str, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """A `run:` step as GitHub Actions runs it: bash -e -o pipefail."""
    return run_owned(["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", script],
                     cwd=cwd, env=env, timeout=120)


def test_the_settings_step_writes_settings_the_grader_accepts(tmp_path: Path) -> None:
    done = run_step(workflow_steps()["Use the instructor's settings"]["run"], tmp_path,
                    dict(os.environ))
    assert done.returncode == 0, done.stderr
    settings = load_config(tmp_path / "grader.toml")
    assert settings.round.id == PREFIX.id
    max_score = yaml.safe_load(WORKFLOW.read_text())["jobs"]["run-autograding-tests"]["env"][
        "MAX_SCORE"]
    assert sum(settings.weights().values()) == float(max_score)


def stand_in_python(tmp_path: Path, script: str) -> dict[str, str]:
    """The environment of a step whose `python` is a stand-in (installing the grader and
    importing torch for real is what the CLI tests above do), writing its outputs here."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "python").write_text(f"#!/bin/sh\n{script}\n")
    (bin_dir / "python").chmod(0o755)
    return {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}", "MAX_SCORE": "100",
            "GITHUB_OUTPUT": str(tmp_path / "github_output"), "RUNNER_TEMP": str(tmp_path)}


def step_result(tmp_path: Path) -> str:
    key, _, value = (tmp_path / "github_output").read_text().strip().partition("=")
    assert key == "result"
    return value


def test_the_grading_step_hands_on_what_the_grader_printed(tmp_path: Path) -> None:
    """Exit status 1 (a check did not pass) with a result is a result, not a failure; and the
    command line is one `grader check` accepts."""
    line = classroom.encode(classroom.document(perfect_run(["part1"])))
    env = stand_in_python(tmp_path, f'echo "$@" > "{tmp_path}/argv"\necho {line}\nexit 1')

    done = run_step(workflow_steps()["Run the hidden checks"]["run"], tmp_path, env)

    assert done.returncode == 0, done.stderr
    assert step_result(tmp_path) == line
    argv = (tmp_path / "argv").read_text().split()
    # -P: a `grader` package committed to the student's repository is not what runs.
    assert argv[:4] == ["-P", "-m", "grader", "check"]
    with cli.make_context("grader", argv[3:], resilient_parsing=False) as context:
        command = cli.get_command(context, "check")
        assert command is not None
        parsed = command.make_context("check", argv[4:], parent=context).params
    assert parsed["output_format"] == "classroom" and parsed["seed"] == 1


def test_a_grader_that_cannot_run_still_reports_an_error_worth_nothing(tmp_path: Path) -> None:
    """No grader installed (or a broken one): the step still hands the reporter a result, and
    the step after it shows what went wrong."""
    env = stand_in_python(tmp_path, "echo 'No module named grader' >&2\nexit 3")
    steps = workflow_steps()

    done = run_step(steps["Run the hidden checks"]["run"], tmp_path, env)

    assert done.returncode == 0, done.stderr
    doc = decoded(step_result(tmp_path))
    assert doc["status"] == "error" and doc["max_score"] == 100
    assert [t["score"] for t in doc["tests"]] == [0]
    assert "could not run (exit status 3)" in doc["tests"][0]["message"]
    if shutil.which("jq"):
        shown = run_step(steps["Show what did not pass"]["run"], tmp_path,
                         {**env, "RESULT": step_result(tmp_path)})
        assert shown.returncode == 0, shown.stderr
        assert shown.stdout.startswith("error: grader\nThe grader could not run")
