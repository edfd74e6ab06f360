"""Jupyter and Colab: the grader as IPython magics (the starter notebooks are
grader.candidate.notebook's).

`%load_ext grader` registers two magics in the kernel:

- `%%part PART`: the cell is the part's whole exercise file. It is written to the workspace
  (after a backup of what it replaces, as `reset` takes one, so `grader restore` undoes it) and
  the part is checked, the scorecard shown under the cell.
- `%grader ARGS`: any command, as `grader ARGS` runs in a terminal (check, hint, list,
  explain, mock start/status/end, solution, ...), its output inline; `%grader workspace DIR
  [--round R] [--flavor F]` chooses the workspace the others use, making it first where DIR
  holds none (so on Colab the starter notebook alone sets everything up).

The commands run in the kernel's process, but candidate code never does: checking goes through
the grader's worker and its children (sandboxed where bubblewrap is), exactly as in a terminal,
and nothing here imports torch. Errors are one line, never a traceback.
"""

from __future__ import annotations

import contextlib
import shlex
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import click

from grader.candidate.backups import write_part
from grader.cli import cli, error_line
from grader.engine.bundle import BundleError
from grader.engine.rounds import DEFAULT_ROUND, RoundError
from grader.engine.workspace import CONFIG_NAME, WorkspaceError, init_workspace, load_workspace


def run_command(args: Sequence[str]) -> int:
    """One grader command in this process, as the console script runs it: its exit status,
    with errors as one line on stderr."""
    try:
        code = cli.main(args=list(args), prog_name="grader", standalone_mode=False)
    except click.ClickException as exc:
        exc.show()
        return exc.exit_code
    except click.Abort:
        click.echo("Interrupted.", err=True)
        return 130
    except SystemExit as exc:
        return exc.code if isinstance(exc.code, int) else 1
    except (OSError, RoundError, BundleError) as exc:
        click.echo(error_line(exc), err=True)
        return 1
    return code if isinstance(code, int) else 0


WORKSPACE_ARGS = click.Command("workspace", params=[
    click.Argument(["directory"], default="."),
    click.Option(["--round", "round_id"], default=DEFAULT_ROUND),
    click.Option(["--flavor"], default=None),
])
"""The arguments of `%grader workspace`, parsed as click parses a command's."""


class Session:
    """What the magics share in one kernel: the workspace they work in (None: the kernel's
    current folder, as a terminal's)."""

    def __init__(self) -> None:
        self.folder: Path | None = None

    def grader(self, line: str) -> int:
        """`%grader ARGS`."""
        try:
            args = shlex.split(line)
        except ValueError as exc:
            click.echo(f"Error: {exc}", err=True)
            return 2
        if args[:1] == ["workspace"]:
            return self.choose(args[1:])
        with contextlib.chdir(self.folder or Path.cwd()):
            return run_command(args)

    def choose(self, args: list[str]) -> int:
        """`%grader workspace DIR [--round R] [--flavor F]`: use DIR, made first if needed."""
        try:
            with WORKSPACE_ARGS.make_context("%grader workspace", args) as ctx:
                folder = Path(ctx.params["directory"])
                round_id, flavor = ctx.params["round_id"], ctx.params["flavor"]
        except click.ClickException as exc:
            exc.show()
            return exc.exit_code
        try:
            if (folder / CONFIG_NAME).is_file():
                workspace = load_workspace(folder)
                said = "Using"
            else:
                workspace = init_workspace(folder, flavor, round_id=round_id)
                said = "Created"
        except (WorkspaceError, RoundError) as exc:
            click.echo(f"Error: {exc}", err=True)
            return 1
        self.folder = workspace.root
        click.echo(f"{said} the {workspace.flavor} workspace for the {workspace.round.id} round "
                   f"at {workspace.root}")
        return 0

    def part(self, line: str, cell: str) -> int:
        """`%%part PART`: save the cell as the part's file, then check the part."""
        words = line.split()
        try:
            workspace = load_workspace(self.folder or Path.cwd())
            if len(words) != 1:
                raise WorkspaceError("write %%part PART on the cell's first line, e.g. "
                                     "%%part part1")
            (part_id,) = words
            if part_id not in workspace.round.part_ids:
                raise WorkspaceError(f"{workspace.round.id} has no part {part_id!r}; its parts: "
                                     f"{', '.join(workspace.round.part_ids)}")
            outcome = write_part(workspace, part_id, cell)
        except (WorkspaceError, OSError) as exc:
            click.echo(f"Error: {exc}", err=True)
            return 1
        if outcome.backup is not None:
            click.echo(f"saved {part_id}; the file it replaced is in backup "
                       f"{outcome.backup.name} (`%grader restore {outcome.backup.name} --yes`)")
        with contextlib.chdir(workspace.root):
            return run_command(["check", part_id])


def load(shell: Any) -> None:
    """Register the magics on an IPython shell (a kernel's; nothing of IPython is imported
    here)."""
    session = Session()

    def grader(line: str) -> None:
        session.grader(line)

    def part(line: str, cell: str) -> None:
        session.part(line, cell)

    shell.register_magic_function(grader, magic_kind="line", magic_name="grader")
    shell.register_magic_function(part, magic_kind="cell", magic_name="part")
