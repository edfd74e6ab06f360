"""The `grader` command line: parse, call the library, render, choose the exit code.

Each command is a few lines over the library. Domain errors become ClickException here and only
here, so users see one clear line and exit 1; usage errors exit 2. Importing this module must
not import torch: `grader --help` and `grader list` stay instant.
"""

from __future__ import annotations

import random
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click
from rich.console import Console

from grader import __version__
from grader.parts import DEFAULT_FLAVOR, FLAVORS, PART_IDS, get_part
from grader.workspace import (
    Workspace,
    WorkspaceError,
    find_workspace,
    init_workspace,
    load_workspace,
)

if TYPE_CHECKING:
    from grader.runner import Request

F = TypeVar("F", bound=Callable[..., Any])
DEFAULT_TIMEOUT_S = 10.0

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


def resolve_workspace(workspace_dir: Path | None) -> Workspace:
    try:
        return load_workspace(workspace_dir) if workspace_dir else find_workspace()
    except WorkspaceError as exc:
        raise click.ClickException(str(exc)) from exc


def build_request(workspace: Workspace, parts: tuple[str, ...], seed: int | None,
                  timeout_s: float | None, memory_mb: int, device: str = "auto") -> Request:
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
        seed=seed if seed is not None else random.randrange(10**6),
        timeout_s=timeout_s or settings.timeout_s or DEFAULT_TIMEOUT_S, memory_mb=memory_mb,
        weights={p: settings.weight(get_part(p)) for p in selected}, device=device,
    )


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
@click.option("--timeout", "timeout_s", type=click.FloatRange(min=0.1),
              help="Seconds each check may run before it is stopped (default: grader.toml's "
              "timeout, else 10).")
@click.option("--memory-mb", type=click.IntRange(min=64), default=2048, show_default=True,
              help="Extra memory your code may allocate per part.")
@click.option("--device", type=click.Choice(["auto", "cpu", "cuda"]), default="auto",
              show_default=True, help="Where part 4's timing check runs (auto: CUDA when "
              "available). Without CUDA the timing is shown for information and skipped.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON document instead.")
def check(parts: tuple[str, ...], workspace_dir: Path | None, seed: int | None,
          timeout_s: float | None, memory_mb: int, device: str, as_json: bool) -> None:
    from grader import report, state
    from grader.runner import GraderCrash, run_request

    workspace = resolve_workspace(workspace_dir)
    request = build_request(workspace, parts, seed, timeout_s, memory_mb, device)
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


def main() -> None:
    cli(prog_name="grader")
