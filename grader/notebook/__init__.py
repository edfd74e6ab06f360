"""The notebook front end: `%load_ext grader` in Jupyter or Colab gives the `%%part PART` cell
magic and the `%grader ...` line magic, on the same engine as the command line.

The magics are the click commands run in the kernel's process with the arguments typed after
`%grader` (so there is one implementation of check, hint, list, explain and mock, and their rich
scorecards render inline); a check still runs the candidate's code in the runner's separate
process (sandboxed where the machine allows), never in the kernel. Errors are the commands' one
clear line, never a traceback; the kernel stays up.
"""

from __future__ import annotations

import shlex
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import click

COMMANDS = ("check", "hint", "list", "explain", "mock", "solution", "init", "rounds",
            "backups", "restore")
"""The `grader` commands `%grader` runs (`workspace` is the magics' own)."""
ANYWHERE = ("init", "rounds")
"""The commands that take no --workspace."""
USAGE = ("usage: %grader workspace [DIR] | %grader {" + "|".join(COMMANDS)
         + "} [ARGS]... (as the `grader` command takes them)")


@dataclass
class Session:
    """What the magics remember between cells: the workspace chosen with `%grader workspace`
    or made with `%grader init` (None: found from the kernel's current folder upwards)."""

    workspace: Path | None = None

    def run(self, words: list[str]) -> bool:
        """Run one `grader` command as the console script would, inside the kernel; whether it
        succeeded."""
        from grader import cli

        args = list(words)
        if self.workspace is not None and words[0] not in ANYWHERE and words != ["mock"] \
                and "--workspace" not in words:
            args += ["--workspace", str(self.workspace)]
        with warnings.catch_warnings():
            # rich's live "grading…" line wants ipywidgets in Jupyter; without it the scorecard
            # still renders, so its warning would only be noise under every check.
            warnings.filterwarnings("ignore", message='install "ipywidgets"')
            return _guarded(lambda: cli.cli.main(args, prog_name="grader",
                                                 standalone_mode=False))

    def line(self, line: str) -> None:
        """`%grader ...`."""
        try:
            words = shlex.split(line)
        except ValueError as exc:
            _error(f"cannot read the arguments: {exc}")
            return
        if not words or words[0] not in (*COMMANDS, "workspace"):
            _error(USAGE)
        elif words[0] == "workspace":
            self.choose(words[1:])
        elif self.run(words) and words[0] == "init":
            self.workspace = _made_by_init(words[1:])

    def choose(self, rest: list[str]) -> None:
        """`%grader workspace [DIR]`: use the workspace at DIR from now on, or say which is used."""
        from grader import cli

        if len(rest) > 1:
            _error(USAGE)
            return
        chosen = Path(rest[0]) if rest else self.workspace

        def show() -> None:
            workspace = cli.resolve_workspace(chosen)
            if rest:
                self.workspace = workspace.root
            click.echo(f"Workspace: {workspace.root} ({workspace.round.id} round, "
                       f"{workspace.flavor} flavor)")

        _guarded(show)

    def cell(self, line: str, cell: str) -> None:
        """`%%part PART`: save the cell as PART's exercise file (backed up first), then check
        PART."""
        from grader import cli
        from grader.candidate import backups

        words = line.split()
        if len(words) != 1:
            _error("usage: %%part PART (the first line of a cell holding that part's code)")
            return
        saved: list[str] = []

        def save() -> None:
            workspace = cli.resolve_workspace(self.workspace)
            part = cli.one_part(workspace, words[0])
            outcome = backups.write_part(workspace, part, cell)
            kept = (f"; the file it replaced is in backup {outcome.backup.name} "
                    f"(`%grader restore {outcome.backup.name}` brings it back)"
                    if outcome.backup else " (unchanged)")
            click.echo(f"Saved exercises/{workspace.round.part(part).file}{kept}")
            saved.append(part)

        _guarded(save)
        if saved:
            self.run(["check", *saved])


def _made_by_init(args: list[str]) -> Path:
    """The folder a successful `init` with these arguments made, as click parsed them."""
    from grader import cli

    directory = cli.init.make_context("init", list(args)).params["directory"]
    assert isinstance(directory, Path)
    return directory.resolve()


def _error(message: str) -> None:
    click.echo(f"Error: {message}", err=True)


def _guarded(action: Callable[[], Any]) -> bool:
    """Run a command's body: its one-line errors are shown, nothing is raised into the
    notebook (a failed check has said so in its scorecard); whether it ran to the end with
    exit status 0."""
    from grader import cli

    try:
        with cli.one_line_errors():
            action()
    except click.ClickException as exc:
        exc.show()
    except click.exceptions.Abort:
        _error("stopped")
    except SystemExit as exc:
        return exc.code in (0, None)
    else:
        return True
    return False


def load_ipython_extension(ipython: Any) -> None:
    """`%load_ext grader`: register `%grader` and `%%part` on a fresh Session."""
    session = Session()
    ipython.register_magic_function(session.line, magic_kind="line", magic_name="grader")
    ipython.register_magic_function(session.cell, magic_kind="cell", magic_name="part")
