"""The `grader` command line: parse, call the library, render, choose the exit code.

Each command is a few lines over the library. Domain errors become ClickException here and only
here, so users see one clear line and exit 1; usage errors exit 2. Importing this module must
not import torch: `grader --help` and `grader list` stay instant.
"""

from __future__ import annotations

import os
import random
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click
from rich.console import Console

from grader import __version__
from grader.parts import DEFAULT_FLAVOR, FLAVORS, PART_IDS, get_part
from grader.workspace import DEFAULT_TIMEOUT_S as DEFAULT_TIMEOUT_S  # kept importable from here
from grader.workspace import (
    Settings,
    Workspace,
    WorkspaceError,
    find_config,
    find_workspace,
    init_workspace,
    load_config,
    load_workspace,
)

if TYPE_CHECKING:
    from grader.runner import Request

F = TypeVar("F", bound=Callable[..., Any])

CHECK_HELP = """Run the hidden checks on your exercises and print a scorecard.

PARTS are any of part1 part2 part3 part4 (default: all). Exit status: 0 when every selected
check passed (skips allowed), 1 otherwise, 2 on a usage error.
"""


def console() -> Console:
    """Rich respects NO_COLOR and drops colour when stdout is not a terminal."""
    return Console(highlight=False)


def workspace_option(func: F) -> F:
    return click.option(
        "--workspace", "workspace_dir", type=click.Path(file_okay=False, path_type=Path),
        help="The workspace folder (default: found from the current folder upwards).",
    )(func)


def resolve_workspace(workspace_dir: Path | None, require_exercises: bool = True) -> Workspace:
    try:
        if workspace_dir:
            return load_workspace(workspace_dir, require_exercises)
        return find_workspace(require_exercises=require_exercises)
    except WorkspaceError as exc:
        raise click.ClickException(str(exc)) from exc


def stdin_is_terminal() -> bool:
    """Whether someone can answer a question (tests replace this to play that someone)."""
    return sys.stdin.isatty()


def confirm_or_stop(yes: bool, question: str) -> None:
    """Go on with --yes or a "y" typed at a terminal; otherwise stop before changing anything."""
    if yes:
        return
    if not stdin_is_terminal():
        raise click.ClickException("no terminal to confirm on, so nothing was changed; "
                                   "pass --yes to go ahead without asking")
    if not click.confirm(question, default=False):
        raise click.ClickException("nothing was changed")


def fresh_seed(seed: int | None) -> int:
    return seed if seed is not None else random.randrange(10**6)


def build_request(workspace: Workspace, parts: tuple[str, ...], seed: int | None,
                  timeout_s: float | None, memory_mb: int) -> Request:
    """The runner request for a check: the selected (or enabled) parts under the settings."""
    from grader.runner import Request

    settings = workspace.settings
    disabled = [p for p in parts if p not in settings.enabled]
    if disabled:
        raise click.UsageError(f"not enabled in {workspace.root}/grader.toml: "
                               f"{', '.join(disabled)} "
                               f"(enabled: {', '.join(settings.enabled)})")
    selected = list(dict.fromkeys(parts)) or list(settings.enabled)
    return Request(
        id="check", root=str(workspace.root), flavor=workspace.flavor, parts=selected,
        seed=fresh_seed(seed), timeout_s=settings.timeout(timeout_s), memory_mb=memory_mb,
        weights={p: settings.weight(get_part(p)) for p in selected},
    )


def timeout_option(func: F) -> F:
    return click.option(
        "--timeout", "timeout_s", type=click.FloatRange(min=0.1),
        help="Seconds each check may run (default: grader.toml's timeout, else 10).",
    )(func)


def memory_option(func: F) -> F:
    return click.option(
        "--memory-mb", type=click.IntRange(min=64), default=2048, show_default=True,
        help="Extra memory the code under test may allocate per part.",
    )(func)


part_argument = click.argument(
    "parts", nargs=-1, type=click.Choice(PART_IDS), metavar="[PARTS]..."
)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="grader")
def cli() -> None:
    """Autograder for the prefix-matrix-products autograd round.

    Fill in the stubs under exercises/, then run `grader check` (or `grader check part3`).
    """


@cli.command()
@click.argument("directory", type=click.Path(path_type=Path))
@click.option("--flavor", type=click.Choice(FLAVORS), default=DEFAULT_FLAVOR, show_default=True,
              help="torch: tensors in and out, autograd checks; numpy: arrays in and out.")
def init(directory: Path, flavor: str) -> None:
    """Create a fresh workspace at DIRECTORY (never overwrites existing work)."""
    try:
        workspace = init_workspace(directory, flavor)
    except WorkspaceError as exc:
        raise click.ClickException(str(exc)) from exc
    click.echo(f"Created a {flavor} workspace at {workspace.root}")
    click.echo(f"Next: cd {directory} && grader check part1")


@cli.command(help=CHECK_HELP)
@part_argument
@workspace_option
@click.option("--seed", type=int, help="Seed for the random inputs (default: a fresh one).")
@timeout_option
@memory_option
@click.option("--json", "as_json", is_flag=True, help="Print one JSON document instead.")
def check(parts: tuple[str, ...], workspace_dir: Path | None, seed: int | None,
          timeout_s: float | None, memory_mb: int, as_json: bool) -> None:
    from grader import report, state
    from grader.runner import GraderCrash, run_request

    workspace = resolve_workspace(workspace_dir)
    request = build_request(workspace, parts, seed, timeout_s, memory_mb)
    out = console()
    try:
        if as_json:
            result = run_request(request)
        else:
            with out.status("grading…") as status:
                result = run_request(request, lambda part, c: status.update(
                    f"grading {part}: {c.id} {c.status}"))
    except GraderCrash as exc:
        raise click.ClickException(f"the grader itself failed; please report this:\n{exc}") \
            from exc
    state.record_results(workspace, result)
    if as_json:
        click.echo(report.render_json(result))
    else:
        report.render_scorecard(out, result)
    sys.exit(0 if result.all_passed else 1)


@cli.command("list")
@workspace_option
def list_parts(workspace_dir: Path | None) -> None:
    """Show the four parts, their files and time budgets, and your last result on each."""
    from grader import report, state

    workspace = resolve_workspace(workspace_dir)
    report.render_part_list(console(), state.last_results(workspace))


@cli.command()
@click.argument("part", type=click.Choice(PART_IDS))
@workspace_option
def hint(part: str, workspace_dir: Path | None) -> None:
    """Show the next hint for PART: a nudge, then the approach, then a near-solution."""
    from grader import report, state

    workspace = resolve_workspace(workspace_dir)
    level = state.take_hint(workspace, part, len(get_part(part).hints))
    report.render_hint(console(), part, level)


RESET_HELP = """Put pristine stubs back: the PARTS named, or everything with --all.

The stubs come from the installed grader (not from git), in the workspace's flavor. Before any
file changes, every file under exercises/ and the progress records (last results, hints taken)
are copied to .grader/backups/<timestamp>/, so `grader restore` undoes a reset. --all gives a
fresh workspace: it also removes files you added under exercises/ (they are in the backup) and
forgets last results and hints. On a terminal you are asked first; without one, nothing changes
unless --yes is given (exit 1).
"""

GRADE_HELP = """Grade many submissions at once, in parallel, each as isolated as `grader check`.

A SUBMISSION is a workspace folder, a folder holding the four exercise files, or a .zip of
either; a folder that is none of these counts as a folder of submissions (each subfolder and
.zip in it). Settings (flavor, enabled parts, points, timeout) come from --config, else from the
grader.toml of the current folder or its parents, else the defaults; a candidate's own
grader.toml is never obeyed. A broken submission gets its own row and never stops the batch.
Exit status: 0 when every submission got a row, 1 when the grader itself failed on one.
"""

SELFCHECK_HELP = """Prove the exercises and the checks agree: every pristine stub fails every
check and every reference solution passes every check, in each flavor.

Run it after editing a stub, a reference or a check. Exit status 1 lists every violation.
"""

jobs_option = click.option(
    "--jobs", "-j", type=click.IntRange(min=1), default=min(4, os.cpu_count() or 1),
    show_default=True, help="Warm workers grading side by side (each imports torch once).",
)


@cli.command(help=RESET_HELP)
@part_argument
@click.option("--all", "reset_all", is_flag=True, help="Reset every part and the whole folder.")
@click.option("--yes", "-y", is_flag=True, help="Do not ask for confirmation.")
@workspace_option
def reset(parts: tuple[str, ...], reset_all: bool, yes: bool,
          workspace_dir: Path | None) -> None:
    from grader import backups, instructor_report

    if bool(parts) == reset_all:
        raise click.UsageError("name the parts to reset (e.g. `grader reset part1`) or pass "
                               "--all, not both")
    workspace = resolve_workspace(workspace_dir, require_exercises=False)
    targets = None if reset_all else list(dict.fromkeys(parts))
    out = console()
    changes = backups.plan_reset(workspace, targets)
    instructor_report.render_changes(out, f"Reset in {workspace.root}", changes)
    confirm_or_stop(yes, "Reset these files? (the current ones are backed up first)")
    try:
        outcome = backups.reset(workspace, targets)
    except WorkspaceError as exc:
        raise click.ClickException(str(exc)) from exc
    instructor_report.render_outcome(out, "reset", outcome, workspace.root)


@cli.command("backups")
@workspace_option
def list_backups(workspace_dir: Path | None) -> None:
    """List the backups that reset and restore made, newest last."""
    from grader import backups, instructor_report

    workspace = resolve_workspace(workspace_dir, require_exercises=False)
    instructor_report.render_backups(console(), backups.list_backups(workspace),
                                     backups.backups_root(workspace))


@cli.command()
@click.argument("backup", required=False)
@workspace_option
def restore(backup: str | None, workspace_dir: Path | None) -> None:
    """Bring back the files of BACKUP (a name from `grader backups`; default: the latest).

    The current files are backed up first, so a restore can be undone like a reset.
    """
    from grader import backups, instructor_report

    workspace = resolve_workspace(workspace_dir, require_exercises=False)
    out = console()
    try:
        chosen = backups.find_backup(workspace, backup)
        changes = backups.plan_restore(workspace, chosen)
        instructor_report.render_changes(out, f"Restore {chosen.name} ({chosen.reason})",
                                         changes)
        outcome = backups.restore(workspace, chosen)
    except WorkspaceError as exc:
        raise click.ClickException(str(exc)) from exc
    instructor_report.render_outcome(out, "restore", outcome, workspace.root)


def instructor_settings(config_file: Path | None) -> tuple[str, Settings, Path | None]:
    """Flavor and settings from --config, else the nearest grader.toml, else the defaults."""
    path = config_file or find_config()
    if path is None:
        return DEFAULT_FLAVOR, Settings(), None
    try:
        flavor, settings = load_config(path)
    except WorkspaceError as exc:
        raise click.ClickException(str(exc)) from exc
    return flavor, settings, path


@cli.command(help=GRADE_HELP)
@click.argument("submissions", nargs=-1, required=True, type=click.Path(path_type=Path))
@jobs_option
@click.option("--json", "as_json", is_flag=True,
              help='Print {"submissions": [...]} as JSON instead of the table.')
@click.option("--csv", "csv_file", type=click.Path(dir_okay=False, path_type=Path),
              help="Also write one CSV line per submission to this file.")
@click.option("--gradescope", "gradescope_file", type=click.Path(dir_okay=False, path_type=Path),
              help="Write Gradescope's results.json here (one SUBMISSION), updated as each "
              "part finishes.")
@click.option("--config", "config_file",
              type=click.Path(exists=True, dir_okay=False, path_type=Path),
              help="The instructor's grader.toml (default: found from the current folder up).")
@click.option("--flavor", type=click.Choice(FLAVORS), help="Override the config's flavor.")
@click.option("--seed", type=int, help="Seed for the random inputs, shared by every submission.")
@timeout_option
@memory_option
def grade(submissions: tuple[Path, ...], jobs: int, as_json: bool, csv_file: Path | None,
          gradescope_file: Path | None, config_file: Path | None, flavor: str | None,
          seed: int | None, timeout_s: float | None, memory_mb: int) -> None:
    from grader import instructor_report
    from grader.batch import BatchListener, Fanout, GradingConfig, grade_submissions
    from grader.gradescope import GradescopeWriter
    from grader.state import write_bytes_atomic

    if gradescope_file and len(submissions) != 1:
        raise click.UsageError("--gradescope grades exactly one SUBMISSION")
    file_flavor, settings, config_path = instructor_settings(config_file)
    config = GradingConfig(flavor=flavor or file_flavor, settings=settings,
                           seed=fresh_seed(seed), timeout_s=settings.timeout(timeout_s),
                           memory_mb=memory_mb)
    listeners: list[BatchListener] = []
    if gradescope_file:
        listeners.append(GradescopeWriter(
            gradescope_file, config.settings.gradescope_visibility,
            {"flavor": config.flavor, "seed": config.seed, "grader_version": __version__}))
    err = Console(stderr=True, highlight=False)
    with instructor_report.BatchProgress(err, len(config.parts)) as progress:
        rows = grade_submissions(list(submissions), config, jobs,
                                 Fanout(progress, *listeners),
                                 expand_folders=gradescope_file is None)
    if csv_file:
        write_bytes_atomic(csv_file, instructor_report.batch_csv(rows, config.parts).encode())
    if as_json:
        click.echo(instructor_report.batch_json(rows))
    else:
        instructor_report.render_batch(console(), rows, config, config_path)
    sys.exit(1 if any(row.status == "error" for row in rows) else 0)


@cli.command(help=SELFCHECK_HELP)
@click.option("--flavor", "flavors", type=click.Choice(FLAVORS), multiple=True,
              help="Check only this flavor (repeatable; default: every flavor).")
@click.option("--seed", type=int, help="Seed for the random inputs (default: a fresh one).")
@timeout_option
@jobs_option
def selfcheck(flavors: tuple[str, ...], seed: int | None, timeout_s: float | None,
              jobs: int) -> None:
    from grader import instructor_report
    from grader.selfcheck import run_selfcheck

    settings = instructor_settings(None)[1]
    err = Console(stderr=True, highlight=False)
    with err.status("selfcheck: grading the stubs and the references…") as status:
        report = run_selfcheck(flavors or FLAVORS, fresh_seed(seed), settings.timeout(timeout_s),
                               jobs, lambda flavor, source, _: status.update(
                                   f"selfcheck: graded the {flavor} {source}"))
    instructor_report.render_selfcheck(console(), report)
    sys.exit(0 if report.ok else 1)


def main() -> None:
    cli(prog_name="grader")
