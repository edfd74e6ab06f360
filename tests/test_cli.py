"""The command line: click's CliRunner on grader.cli.cli for the commands' behaviour, and a few
runs of the real console entry (`python -m grader`) in a subprocess, end to end.

CliRunner tests grade through the session's warm worker (lent to each command in place of a new
one), so they exercise the real CLI, worker and checks without paying for a torch import each
time.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from grader.cli import cli
from grader.engine.rounds import ROUNDS_DIR
from grader.runner import Request

from helpers import (
    PREFIX,
    REPO,
    run_grader,
    run_owned,
    solution,
    validate_run_json,
    write_workspace,
)


def invoke(runner: CliRunner, *args: str | Path) -> Result:
    return runner.invoke(cli, [str(a) for a in args], catch_exceptions=False)


def json_of(result: Result) -> dict:
    doc = json.loads(result.stdout)
    validate_run_json(doc)
    return doc


def statuses(doc: dict) -> dict[str, str]:
    return {c["id"]: c["status"] for p in doc["parts"] for c in p["checks"]}


def full_marks_end_to_end(tmp: pytest.TempPathFactory) -> subprocess.CompletedProcess[str]:
    """The torch reference through the real console entry (run once per test process)."""
    root = write_workspace(tmp.mktemp("e2e") / "ws", "torch")
    return run_grader("check", "--json", "--seed", "7", "--workspace", root, cwd=root.parent)


def print_spam_end_to_end(tmp: pytest.TempPathFactory) -> subprocess.CompletedProcess[str]:
    """A candidate that writes megabytes to print, sys.stderr and the raw file descriptors,
    graded from a subfolder by the real console entry (run once per test process)."""
    case = solution("hostile_print_spam")
    root = write_workspace(tmp.mktemp("spam") / "ws", "numpy", files=case.files("numpy"))
    return run_grader("check", "part1", "--json", "--seed", "1", cwd=root / "exercises")


JOBS = (full_marks_end_to_end, print_spam_end_to_end)


# ---- grader check ------------------------------------------------------------------------

@pytest.mark.parametrize("flavor", ["torch", "numpy"])
def test_the_reference_gets_full_marks(grading, runner: CliRunner, tmp_path: Path,  # type: ignore[no-untyped-def]
                                       flavor: str) -> None:
    """The torch flavor runs the real console entry in a process of its own, end to end; the
    numpy flavor the same command through CliRunner."""
    if flavor == "torch":
        done = grading.once(full_marks_end_to_end)
        assert done.returncode == 0, done.stderr
        doc = json.loads(done.stdout)
    else:
        root = write_workspace(tmp_path / "ws", flavor)
        result = invoke(runner, "check", "--json", "--seed", "7", "--workspace", root)
        assert result.exit_code == 0, result.output
        doc = json.loads(result.stdout)
    validate_run_json(doc)
    assert doc["flavor"] == flavor and doc["seed"] == 7
    assert [p["id"] for p in doc["parts"]] == list(PREFIX.part_ids)
    not_passed = {cid: st for cid, st in statuses(doc).items() if st != "passed"}
    # Without CUDA the GPU timing check is skipped (worth nothing here); nothing else may be.
    assert not_passed in ({}, {"part4.timing": "skipped"})
    assert doc["score"] == pytest.approx(doc["max_score"]) == pytest.approx(100.0)


def test_untouched_stubs_fail_cleanly(runner: CliRunner, tmp_path: Path,
                                     monkeypatch: pytest.MonkeyPatch) -> None:
    root = write_workspace(tmp_path / "ws", "torch", start="stubs")
    monkeypatch.chdir(root)
    result = runner.invoke(cli, ["check"])
    assert result.exit_code == 1
    assert "not implemented yet" in result.output
    assert "Traceback" not in result.output
    assert "Score 0.0/100.0" in result.output


@pytest.mark.parametrize("flavor", ["torch", "numpy"])
def test_untouched_stubs_read_as_not_implemented(runner: CliRunner, tmp_path: Path,
                                                 flavor: str) -> None:
    root = write_workspace(tmp_path / "ws", flavor, start="stubs")
    result = invoke(runner, "check", "--json", "--workspace", root)
    assert result.exit_code == 1
    doc = json_of(result)
    assert doc["score"] == 0
    for part in doc["parts"]:
        first = part["checks"][0]
        assert first["status"] == "failed"
        assert first["message"].startswith("not implemented yet"), first
        assert first["hint"] == "Fill in the stub, then run the check again."


def test_the_scorecard_of_a_passing_workspace(runner: CliRunner, tmp_path: Path) -> None:
    root = write_workspace(tmp_path / "ws", "numpy")
    result = invoke(runner, "check", "part1", "--workspace", root, "--seed", "3")
    assert result.exit_code == 0
    assert "Score 20.0/20.0" in result.output
    assert "all checks passed" in result.output
    assert "seed 3" in result.output
    assert "\x1b[" not in result.output  # not a terminal: no escape codes


def test_a_missing_part_file_is_an_error_naming_it(runner: CliRunner, tmp_path: Path) -> None:
    root = write_workspace(tmp_path / "ws", "numpy")
    (root / "exercises" / "part1_inplace.py").unlink()
    result = invoke(runner, "check", "part1", "--json", "--workspace", root)
    assert result.exit_code == 1
    for check in json_of(result)["parts"][0]["checks"]:
        assert check["status"] == "error"
        assert "could not import part1_inplace.py" in check["message"]
        assert "No module named 'exercises.part1_inplace'" in check["message"]


def test_selected_parts_are_graded_in_the_order_given(runner: CliRunner, tmp_path: Path) -> None:
    root = write_workspace(tmp_path / "ws", "numpy")
    doc = json_of(invoke(runner, "check", "part2", "part1", "part2", "--json",
                         "--workspace", root))
    assert [p["id"] for p in doc["parts"]] == ["part2", "part1"]


def test_a_skip_of_hidden_work_is_not_a_pass(runner: CliRunner, tmp_path: Path) -> None:
    case = solution("part1_hides_matmuls")
    root = write_workspace(tmp_path / "ws", "numpy", files=case.files("numpy"))
    result = invoke(runner, "check", "part1", "--workspace", root)
    assert result.exit_code == 1  # a skip that keeps its points is not a pass
    assert "– skipped" in result.output and "1 skipped" in result.output
    assert "not passing yet" in result.output
    assert "A skip is not a pass" in " ".join(result.output.split())
    doc = json_of(invoke(runner, "check", "part1", "--json", "--workspace", root))
    assert statuses(doc)["part1.complexity"] == "skipped"
    # The candidate's code hid the work, so the check keeps its points and earns none.
    (complexity,) = [c for c in doc["parts"][0]["checks"] if c["id"] == "part1.complexity"]
    assert complexity["score"] == 0 and complexity["max_score"] > 0
    assert doc["score"] < doc["max_score"] == 20.0


def test_the_same_seed_gives_the_same_verdicts(runner: CliRunner, tmp_path: Path) -> None:
    case = solution("part1_reversed_order")
    root = write_workspace(tmp_path / "ws", "numpy", files=case.files("numpy"))
    runs = [json_of(invoke(runner, "check", "part1", "--json", "--seed", "99",
                           "--workspace", root)) for _ in range(2)]
    messages = [[c["message"] for c in run["parts"][0]["checks"]] for run in runs]
    assert messages[0] == messages[1]
    assert "--seed 99" in runs[0]["parts"][0]["checks"][1]["message"]


@pytest.mark.parametrize("command", [["check", "part9"], ["hint", "part0"]])
def test_an_unknown_part_is_a_usage_error_listing_the_valid_ones(
        runner: CliRunner, tmp_path: Path, command: list[str]) -> None:
    root = write_workspace(tmp_path / "ws", "numpy", start="stubs")
    result = invoke(runner, *command, "--workspace", root)
    assert result.exit_code == 2
    assert all(part_id in result.output for part_id in PREFIX.part_ids)


def test_a_part_disabled_in_the_config_is_a_usage_error(runner: CliRunner,
                                                        tmp_path: Path) -> None:
    root = write_workspace(tmp_path / "ws", "numpy", start="stubs")
    config = root / "grader.toml"
    config.write_text(config.read_text() + '\nparts = ["part1", "part2"]\n')
    result = invoke(runner, "check", "part3", "--workspace", root)
    assert result.exit_code == 2
    assert "not enabled" in result.output and "part1, part2" in result.output


def test_a_request_carries_the_timeout_and_weights_from_the_config(
        runner: CliRunner, grading, tmp_path: Path,  # type: ignore[no-untyped-def]
        monkeypatch: pytest.MonkeyPatch) -> None:
    root = write_workspace(tmp_path / "ws", "numpy")
    config = root / "grader.toml"
    config.write_text(config.read_text() + "\ntimeout = 7\n[points]\npart1 = 50\n")
    seen: list[Request] = []
    real = grading.worker.run  # the lent worker's, not the class's: other workers run too

    def spy(request: Request, *args: object, **kwargs: object) -> object:
        seen.append(request)
        return real(request, *args, **kwargs)

    monkeypatch.setattr(grading.worker, "run", spy)
    doc = json_of(invoke(runner, "check", "part1", "--json", "--workspace", root))
    assert seen[0].timeout_s == 7 and seen[0].weights == {"part1": 50.0}
    assert doc["max_score"] == pytest.approx(50.0)


# ---- finding the workspace -----------------------------------------------------------------

def test_the_workspace_is_found_from_a_subfolder(runner: CliRunner, tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    root = write_workspace(tmp_path / "ws", "numpy")
    (root / "exercises" / "notes").mkdir()
    monkeypatch.chdir(root / "exercises" / "notes")
    doc = json_of(invoke(runner, "check", "part1", "--json"))
    assert doc["flavor"] == "numpy" and doc["parts"][0]["score"] == pytest.approx(20.0)


def test_outside_a_workspace_the_error_says_what_to_do(runner: CliRunner, tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    for args in (["check"], ["list"], ["hint", "part1"], ["list", "--workspace", tmp_path]):
        result = invoke(runner, *args)
        assert result.exit_code == 1, args
        assert "grader init" in result.output and "Traceback" not in result.output


def test_print_spam_never_reaches_the_json_on_stdout(grading) -> None:  # type: ignore[no-untyped-def]
    """stdout is still exactly one JSON document."""
    done = grading.once(print_spam_end_to_end)
    assert done.returncode == 1  # no EXPLANATION
    doc = json.loads(done.stdout)
    validate_run_json(doc)
    assert statuses(doc)["part1.correctness"] == "passed"
    assert "raw stdout" not in done.stdout + done.stderr
    assert "raw stderr" not in done.stdout + done.stderr
    assert len(done.stdout) < 100_000


# ---- grader init -------------------------------------------------------------------------

def test_init_writes_a_workspace_of_the_chosen_flavor(runner: CliRunner, tmp_path: Path) -> None:
    result = invoke(runner, "init", "--flavor", "numpy", tmp_path / "fresh")
    assert result.exit_code == 0, result.output
    config = (tmp_path / "fresh" / "grader.toml").read_text()
    assert 'flavor = "numpy"' in config
    for part in PREFIX.parts:
        stub = (tmp_path / "fresh" / "exercises" / part.file).read_text()
        assert "import numpy as np" in stub and "NotImplementedError" in stub
    assert (tmp_path / "fresh" / "exercises" / "__init__.py").read_text() == (
        '"""The exercises of the prefix-products round (numpy): Prefix matrix products with '
        'hand-written\nautograd.\n\nFill in part1_inplace.py, part2_out_of_place.py, '
        'part3_backward.py, part4_scan.py.\n"""\n')


def test_no_round_ships_a_package_named_after_a_library() -> None:
    """A stub folder named numpy or torch holding an __init__.py reads, to every tool that
    resolves imports, as the library itself: the workspace's __init__.py is the engine's."""
    assert sorted(ROUNDS_DIR.rglob("__init__.py")) == []


def test_init_refuses_to_overwrite(runner: CliRunner, tmp_path: Path) -> None:
    assert invoke(runner, "init", tmp_path / "ws").exit_code == 0
    work = tmp_path / "ws" / "exercises" / "part1_inplace.py"
    work.write_text("# my work in progress\n")
    result = invoke(runner, "init", "--flavor", "numpy", tmp_path / "ws")
    assert result.exit_code == 1
    assert "already exists" in result.output and "Traceback" not in result.output
    assert work.read_text() == "# my work in progress\n"
    assert 'flavor = "torch"' in (tmp_path / "ws" / "grader.toml").read_text()


@pytest.mark.parametrize("name", ["grader.toml", "exercises"])
def test_init_never_writes_through_a_link_that_leads_nowhere(runner: CliRunner, tmp_path: Path,
                                                             name: str) -> None:
    """A dangling link in the folder would otherwise have init create a file wherever it
    points (a shell's startup file, say)."""
    (tmp_path / "ws").mkdir()
    (tmp_path / "ws" / name).symlink_to(tmp_path / "elsewhere")
    result = invoke(runner, "init", tmp_path / "ws")
    assert result.exit_code == 1 and "already exists" in result.output
    assert not (tmp_path / "elsewhere").exists()


def test_init_rejects_an_unknown_flavor(runner: CliRunner, tmp_path: Path) -> None:
    result = invoke(runner, "init", "--flavor", "jax", tmp_path / "ws")
    assert result.exit_code == 2 and "torch" in result.output and "numpy" in result.output
    assert not (tmp_path / "ws").exists()


# ---- grader list / hint ------------------------------------------------------------------

def test_list_shows_every_part_and_the_last_result(runner: CliRunner, tmp_path: Path) -> None:
    root = write_workspace(tmp_path / "ws", "numpy")
    before = invoke(runner, "list", "--workspace", root)
    assert before.exit_code == 0
    for part in PREFIX.parts:
        assert part.id in before.output and f"exercises/{part.file}" in before.output
    assert before.output.count("not checked yet") == len(PREFIX.parts)
    assert invoke(runner, "check", "part1", "--workspace", root).exit_code == 0
    after = invoke(runner, "list", "--workspace", root).output
    assert "full marks" in after and after.count("not checked yet") == len(PREFIX.parts) - 1


def test_hints_come_one_level_per_call(runner: CliRunner, tmp_path: Path) -> None:
    root = write_workspace(tmp_path / "ws", "numpy", start="stubs")
    part = PREFIX.parts[2]
    outputs = [invoke(runner, "hint", part.id, "--workspace", root).output for _ in range(4)]
    assert "hint 1/3: nudge" in outputs[0] and "hint 2/3" not in outputs[0]
    assert "again for the next one" in outputs[0]
    assert "hint 2/3: approach" in outputs[1] and "hint 3/3" not in outputs[1]
    assert "hint 3/3: near-solution" in outputs[2] and "last hint" in outputs[2]
    assert outputs[3] == outputs[2]
    other = invoke(runner, "hint", PREFIX.parts[0].id, "--workspace", root).output
    assert "hint 1/3" in other and "hint 2/3" not in other


# ---- help and start-up cost --------------------------------------------------------------

def test_every_command_has_help(runner: CliRunner) -> None:
    assert set(cli.commands) >= {"init", "check", "list", "hint"}
    for name, command in cli.commands.items():
        assert (command.help or command.short_help or "").strip(), f"{name} has no help text"
        result = invoke(runner, name, "--help")
        assert result.exit_code == 0, name
        assert f"Usage: cli {name}" in result.output or f"Usage: grader {name}" in result.output
    top = invoke(runner, "--help")
    assert top.exit_code == 0 and all(name in top.output for name in cli.commands)


def test_help_and_list_do_not_import_torch(tmp_path: Path) -> None:
    """Nor numpy: a command that grades nothing starts in a tenth of a second; nor does
    asking whether a sandbox can be made, which every `check` does before its worker starts."""
    root = write_workspace(tmp_path / "ws", "torch", start="stubs")
    script = (
        "import sys\n"
        "from grader.cli import cli\n"
        f"for args in (['--help'], ['list', '--workspace', {str(root)!r}], ['hint', 'part1',"
        f" '--workspace', {str(root)!r}], ['check', '--help']):\n"
        "    try:\n"
        "        cli(args, prog_name='grader')\n"
        "    except SystemExit as exit:\n"
        "        assert not exit.code, (args, exit.code)\n"
        "from grader.runner.sandbox import support\n"
        "support()\n"
        "print('TORCH_IMPORTED', 'torch' in sys.modules, 'numpy' in sys.modules)\n"
    )
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    done = run_owned([sys.executable, "-c", script], env=env, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.rstrip().endswith("TORCH_IMPORTED False False")


def test_the_version_option(runner: CliRunner) -> None:
    result = invoke(runner, "--version")
    assert result.exit_code == 0 and "grader" in result.output


def test_the_package_metadata_names_the_whole_loop_and_matches_the_code() -> None:
    """What pip and a registry page show: the name the code tells users to install (the
    report extra, the integrity fix), the version, and a description of the loop, not of one
    round."""
    import tomllib

    import grader

    project = tomllib.loads((Path(__file__).parents[1] / "pyproject.toml").read_text())["project"]
    assert (project["name"], project["version"]) == (grader.DISTRIBUTION, grader.__version__)
    assert grader.REPORT_INSTALL == f'pip install "{grader.DISTRIBUTION}[report]"'
    described = project["description"].lower()
    assert all(words in described for words in (
        "autograd", "matmul backward", "mlp backprop", "gradient checking")), described
    assert project["scripts"]["grader"] == "grader.cli:main"


def test_list_shows_the_workspace_budgets(runner: CliRunner, tmp_path: Path) -> None:
    root = write_workspace(tmp_path / "ws", "numpy", start="stubs")
    config = root / "grader.toml"
    config.write_text(config.read_text() + "\n[budgets]\npart4 = 40\n")
    result = invoke(runner, "list", "--workspace", root)
    assert result.exit_code == 0
    rows = {line.split()[1]: line for line in result.output.splitlines() if "│ part" in line}
    assert "40 min" in rows["part4"] and "25 min" in rows["part3"]


@pytest.mark.parametrize(("last", "hints"), [
    ("[]", '{"part1": "lots"}'),
    ('{"part1": {"score": "full"}, "part2": 7}', "[1, 2]"),
    ('{"part1": {"score": 1, "max_score": 2, "full": "yes", "when": 3}}', '{"part1": -1}'),
    ("null", '{"part1": true}'),
    ("not json", "{"),
    pytest.param("[" * 5000 + "]" * 5000, '{"part1": ' + "[" * 5000 + "]" * 5000 + "}",
                 id="nested-5000-deep"),
    pytest.param('{"part1": ' + "9" * 5000 + "}", '{"part1": ' + "9" * 5000 + "}",
                 id="an-integer-of-5000-digits"),
])
def test_damaged_progress_records_never_stop_check_list_or_hint(
        runner: CliRunner, tmp_path: Path, last: str, hints: str) -> None:
    """.grader/last.json and hints.json are conveniences: whatever they hold (a hand edit, an
    older grader's shape, a crash), check, list and hint run, and write them afresh."""
    root = write_workspace(tmp_path / "ws", "numpy", start="stubs")
    state = root / ".grader"
    state.mkdir(exist_ok=True)
    (state / "last.json").write_text(last)
    (state / "hints.json").write_text(hints)
    for args in (["check", "part1", "--no-sandbox"], ["list"], ["hint", "part1"]):
        done = runner.invoke(cli, [*args, "--workspace", str(root)])
        assert done.exception is None or isinstance(done.exception, SystemExit), (args, done.output)
        assert "Traceback" not in done.output and done.exit_code in (0, 1), (args, done.output)
    assert json.loads((state / "hints.json").read_text()) == {"part1": 1}
    assert set(json.loads((state / "last.json").read_text())) == {"part1"}


def test_a_file_the_command_cannot_write_is_one_line_not_a_traceback(tmp_path: Path) -> None:
    """`.grader` made a plain file: reset cannot back anything up, says so in one line, exits
    1, and changes nothing."""
    root = write_workspace(tmp_path / "ws", "numpy", start="stubs")
    edited = root / "exercises" / "part1_inplace.py"
    edited.write_text(edited.read_text() + "# my work\n")
    assert not (root / ".grader").exists()
    (root / ".grader").write_text("not a folder\n")
    done = run_grader("reset", "--all", "--yes", cwd=root)
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert done.stderr.strip().splitlines()[-1] == \
        f"Error: Not a directory ({root / '.grader' / 'backups'})"
    assert edited.read_text().endswith("# my work\n")
