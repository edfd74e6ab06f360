"""Instructor settings in grader.toml: a bad value stops every command with a clear error."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from grader import cli
from grader.engine.limits import DEFAULT_TIMEOUT_S
from grader.engine.workspace import (
    MAX_CONFIG_BYTES,
    Settings,
    WorkspaceError,
    config_text,
    init_workspace,
    load_config,
)

from helpers import PREFIX


def invoke(args: list[str]) -> Result:
    return CliRunner().invoke(cli.cli, args, env={"COLUMNS": "200"})


BAD = [
    ("timeout = -1\n", "timeout must be a positive finite number, got -1"),
    ("timeout = true\n", "timeout must be a positive finite number, got True"),
    ('parts = ["part1", "part7"]\n', "parts must be a non-empty list drawn from"),
    ("parts = []\n", "parts must be a non-empty list"),
    ("[points]\npart1 = 0\n", "points.part1 must be a positive finite number, got 0"),
    ("[points]\npart9 = 3\n", "[points] names unknown part(s) part9"),
    ("[budgets]\npart2 = \"ten\"\n", "budgets.part2 must be a positive finite number, got 'ten'"),
    ("[mock]\nminutes = 0\n", "mock.minutes must be a positive finite number"),
    ("[gradescope]\nvisibility = \"public\"\n",
     "gradescope.visibility must be one of hidden, after_due_date, after_published, visible"),
    ("[gradescope]\nshow = 1\n", "[gradescope] takes only visibility"),
    ("[cluster]\naddress = 8786\n", "cluster.address must be a scheduler's address such as "
     '"tcp://10.0.0.5:8786", got 8786'),
    ("[cluster]\nworkers = 2\n", "[cluster] takes only address = <string>"),
    ('cluster = "tcp://10.0.0.5:8786"\n', "[cluster] takes only address = <string>"),
    ("colour = 1\n", "unknown setting(s) colour"),
    ('flavor = "jax"\n', "flavor must be one of torch, numpy for round prefix-products, got "
     "'jax'"),
    ('round = "chess"\n', "unknown round 'chess'; installed rounds: prefix-products"),
    ("timeout = inf\n", "timeout must be a positive finite number, got inf"),
    ("[points]\npart1 = nan\n", "points.part1 must be a positive finite number, got nan"),
    ("timeout = \n", "not valid TOML"),
    # Nested past the parser's recursion: as clear an error as any other bad text.
    pytest.param("timeout = " + "[" * 3000 + "]" * 3000 + "\n",
                 "not valid TOML: nested too deep to read", id="arrays-nested-3000-deep"),
    pytest.param("[points]\npart1 = " + "{a = " * 3000 + "1" + "}" * 3000 + "\n",
                 "not valid TOML: nested too deep to read", id="tables-nested-3000-deep"),
    pytest.param("timeout = " + "9" * 5000 + "\n",
                 "not valid TOML: Exceeds the limit (4300 digits)", id="an-integer-of-5000-digits"),
    ("secret = 42\n", "secret must be a non-empty string"),
    ('secret = ""\n', "secret must be a non-empty string"),
    ("[budgets]\npart3 = -inf\n", "budgets.part3 must be a positive finite number, got -inf"),
    ("timeout = 1e308\n", "timeout must be at most 86400, got 1e+308"),
    ("[mock]\nminutes = 1e300\n", "mock.minutes must be at most 10080, got 1e+300"),
    ("[budgets]\npart1 = 1e300\n", "budgets.part1 must be at most 10080, got 1e+300"),
    ("[points]\npart1 = 1e308\n", "points.part1 must be at most 1e+06, got 1e+308"),
]


@pytest.mark.parametrize(("text", "message"), BAD)
def test_every_command_names_the_file_and_the_bad_key(tmp_path: Path, text: str, message: str,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    workspace = init_workspace(tmp_path / "ws")
    config = workspace.root / "grader.toml"
    config.write_text(text)
    monkeypatch.chdir(workspace.root)
    for args in (["check"], ["list"], ["grade", ".", "--config", str(config)], ["grade", "."],
                 ["reset", "--all", "--yes"], ["backups"]):
        result = invoke(args)
        assert result.exit_code == 1, (args, result.output)
        assert f"Error: {config}: " in result.output, (args, result.output)
        assert message in result.output, (args, result.output)


def test_the_documented_template_is_valid_and_means_the_defaults(tmp_path: Path) -> None:
    config = tmp_path / "grader.toml"
    config.write_text(config_text(PREFIX, "numpy"))
    assert load_config(config) == Settings(PREFIX, "numpy")


def test_a_config_without_a_round_is_prefix_products(tmp_path: Path) -> None:
    """Workspaces made before rounds existed keep working."""
    config = tmp_path / "grader.toml"
    config.write_text('flavor = "numpy"\n')
    assert load_config(config) == Settings(PREFIX, "numpy")


def test_every_commented_setting_parses_when_uncommented(tmp_path: Path) -> None:
    config = tmp_path / "grader.toml"
    lines = [line[2:] if line.startswith("# ") and ("=" in line or line.startswith("# ["))
             else line for line in config_text(PREFIX, "torch").splitlines()]
    config.write_text("\n".join(lines) + "\n")
    settings = load_config(config)
    assert settings.timeout_s == 10 and settings.minutes == 75
    assert settings.points["part3"] == 35 and settings.gradescope_visibility == "visible"
    assert settings.parts == PREFIX.parts
    assert settings.cluster_address == "tcp://HOST:8786"


def test_a_huge_config_is_refused_before_it_is_read(tmp_path: Path) -> None:
    config = tmp_path / "grader.toml"
    with open(config, "wb") as handle:
        handle.truncate(3 * 1024**3)  # sparse: 3 GiB on paper, nothing on disk
    with pytest.raises(WorkspaceError, match="too large for a settings file"):
        load_config(config)
    assert config.stat().st_size > MAX_CONFIG_BYTES


def test_a_huge_instructor_config_is_one_clear_line(tmp_path: Path) -> None:
    config = tmp_path / "instructor.toml"
    with open(config, "wb") as handle:
        handle.truncate(MAX_CONFIG_BYTES + 1)
    result = invoke(["grade", str(tmp_path), "--config", str(config)])
    assert (result.exit_code, result.output) == (
        1, f"Error: {config}: {MAX_CONFIG_BYTES + 1} bytes is too large for a settings file "
        "(at most 64 KiB)\n")


@pytest.mark.parametrize("value", ["inf", "nan", "-inf", "1e400", "1e12", "86401"])
def test_a_timeout_that_is_no_finite_number_of_seconds_up_to_a_day_is_a_usage_error(
        tmp_path: Path, value: str) -> None:
    for command in (["check"], ["grade", str(tmp_path)], ["selfcheck"]):
        result = invoke([*command, "--timeout", value])
        assert result.exit_code == 2, (command, result.output)
        assert "Invalid value for '--timeout'" in result.output, (command, result.output)
        assert "Traceback" not in result.output


@pytest.mark.parametrize("value", ["1048577", "99999999999999", "63", "-1"])
def test_a_memory_limit_outside_64_mib_to_a_tib_is_a_usage_error(tmp_path: Path,
                                                                  value: str) -> None:
    """Past a TiB a limit is no limit but an overflow of the kernel's, which read as the
    machine's memory running out in every check ("undecided")."""
    for command in (["check"], ["grade", str(tmp_path)]):
        result = invoke([*command, "--memory-mb", value])
        assert result.exit_code == 2, (command, result.output)
        assert "Invalid value for '--memory-mb'" in result.output, (command, result.output)


@pytest.mark.parametrize("option", ["--csv", "--report", "--gradescope"])
def test_an_output_named_over_a_file_it_did_not_write_is_refused_before_grading(
        tmp_path: Path, option: str) -> None:
    """`grade` writes its CSV, report and results.json over an earlier one of the same kind,
    never over anything else: a coach's slip (`--csv exercises/part1_inplace.py`) is a usage
    error before a submission is graded, and the file stays as it was."""
    workspace = init_workspace(tmp_path / "ws")
    victim = workspace.exercises / "part1_inplace.py"
    before = victim.read_bytes()
    result = invoke(["grade", str(workspace.root), option, str(victim)])
    assert result.exit_code == 2, result.output
    assert f"Error: {option}: {victim} exists and is not " in result.output
    assert victim.read_bytes() == before


def test_each_output_is_told_from_other_files_by_what_its_writer_writes(tmp_path: Path) -> None:
    from grader.coach import gradescope
    from grader.engine.state import replaces_only_its_own
    from grader.render.instructor_report import batch_csv

    path = tmp_path / "out"
    written = {"csv": batch_csv([], ["part1"]).encode(),
               "gradescope": json.dumps(gradescope.document([], "", 0.0, "visible", {})).encode()}
    for kind, data in written.items():
        path.write_bytes(data)
        assert replaces_only_its_own(path, kind) is None, kind  # type: ignore[arg-type]
        for other in ("report", *written):
            if other != kind:
                assert replaces_only_its_own(path, other) is not None, (kind, other)  # type: ignore[arg-type]
    path.write_bytes(b"")
    assert replaces_only_its_own(path, "csv") is None
    assert replaces_only_its_own(tmp_path / "absent", "csv") is None
    # A CSV a spreadsheet saved again is still one; a `check --json` is no results.json.
    for saved in (b"\xef\xbb\xbfpath,status,score,max_score,part1\r\n",
                  b'"path";"status";"score";"max_score";"part1"\n'):
        path.write_bytes(saved)
        assert replaces_only_its_own(path, "csv") is None, saved
    path.write_text(json.dumps({"round": "prefix-products", "score": 20.0, "parts": []}))
    assert replaces_only_its_own(path, "gradescope") is not None


@pytest.mark.parametrize("minutes", ["1e12", "1e300", "10081"])
def test_a_mock_round_longer_than_a_week_is_a_usage_error_and_starts_nothing(
        tmp_path: Path, minutes: str) -> None:
    workspace = init_workspace(tmp_path / "ws")
    result = invoke(["mock", "start", "--minutes", minutes, "--workspace", str(workspace.root)])
    assert result.exit_code == 2 and "Invalid value for '--minutes'" in result.output
    assert not (workspace.state_dir / "mock").exists()


def test_timeout_precedence() -> None:
    assert Settings(PREFIX, "torch").timeout() == DEFAULT_TIMEOUT_S
    assert Settings(PREFIX, "torch", timeout_s=4).timeout() == 4
    assert Settings(PREFIX, "torch", timeout_s=4).timeout(2.5) == 2.5


def test_load_config_names_a_missing_file(tmp_path: Path) -> None:
    with pytest.raises(WorkspaceError, match="cannot read"):
        load_config(tmp_path / "nope.toml")


@pytest.mark.parametrize("command", ["reset", "backups", "restore", "grade", "selfcheck"])
def test_instructor_commands_have_help(command: str) -> None:
    result = invoke([command, "--help"])
    assert result.exit_code == 0
    assert f" {command} [OPTIONS]" in result.output
