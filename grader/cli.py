"""The `grader` command line: parse, call the library, render, choose the exit code.

Each command is a few lines over the library. One rule for the exit status, every command alike:
0 success; 1 checks failed or the operation failed (domain errors become ClickException here and
only here, so users see one clear line); 2 a usage error, a path given that does not exist
included; 130 (128 + SIGINT) on Ctrl-C, with one line "Interrupted." (GraderGroup). Importing
this module must not import torch: `grader --help` and `grader list` stay instant.
"""

from __future__ import annotations

import json
import math
import os
import random
import signal
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click
from rich.console import Console

from grader import REPORT_INSTALL, __version__
from grader.candidate import mock
from grader.engine.bundle import BundleError
from grader.engine.limits import (
    DEFAULT_MEMORY_MB,
    DEFAULT_TIMEOUT_S,
    MOST_MEMORY_MB,
    raise_open_files,
)
from grader.engine.results import points_of
from grader.engine.rounds import DEFAULT_ROUND, Round, RoundError, installed
from grader.engine.safe_text import one_line
from grader.engine.workspace import (
    MOST,
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
    from grader.coach.batch import BatchDoc, GradingConfig, StartGraders
    from grader.engine.secret import Seeding
    from grader.engine.state import OutputKind
    from grader.runner import Request

F = TypeVar("F", bound=Callable[..., Any])
T = TypeVar("T")

CHECK_HELP = """Run the hidden checks on your exercises and print a scorecard.

PARTS are parts of the workspace's round (`grader list` names them; default: all enabled).
Exit status: 0 when every selected check that applies here passed, 1 otherwise, 2 on a usage
error. Your code runs in a bubblewrap sandbox wherever this machine can make one (it cannot
then write into the grader or anything Python loads), else in plain forked processes, with a
note; --no-sandbox asks for plain processes. With an instructor's secret (GRADER_SECRET, e.g.
in GitHub Classroom, else `secret` in grader.toml), the inputs come from it and the seed:
--seed with the seed shown reproduces them only under the same secret.
"""


def console() -> Console:
    """Rich respects NO_COLOR and drops colour when stdout is not a terminal."""
    return Console(highlight=False)


def now() -> float:
    """The time for mock rounds, read through the module so tests can fake the clock."""
    return mock.wall_clock()


def someone_can_answer(needs_screen: bool = False) -> bool:
    """Whether a person can answer a question here: stdin is a terminal and, for questions they
    must read on screen as they come (a mock round's), stdout is one too. Tests replace this to
    play that person."""
    return sys.stdin.isatty() and (not needs_screen or sys.stdout.isatty())


def terminal_ask(out: Console) -> Callable[[], str | None] | None:
    """How follow-up questions get their answers: the terminal, or not at all."""
    from grader.render import views

    return (lambda: views.ask_in_terminal(out)) if someone_can_answer(needs_screen=True) else None


def guarded(action: Callable[..., T], *args: Any) -> T:
    """Run a mock-round action; its domain errors become one clear line."""
    try:
        return action(*args)
    except mock.MockError as exc:
        raise click.ClickException(str(exc)) from exc


def workspace_option(func: F) -> F:
    return click.option(
        "--workspace", "workspace_dir",
        type=click.Path(exists=True, file_okay=False, path_type=Path),
        help="The workspace folder (default: found from the current folder upwards).",
    )(func)


def resolve_workspace(workspace_dir: Path | None, require_exercises: bool = True) -> Workspace:
    try:
        if workspace_dir:
            return load_workspace(workspace_dir, require_exercises)
        return find_workspace(require_exercises=require_exercises)
    except WorkspaceError as exc:
        raise click.ClickException(str(exc)) from exc


def confirm_or_stop(yes: bool, question: str) -> None:
    """Go on with --yes or a "y" typed at a terminal; otherwise stop before changing anything."""
    if yes:
        return
    if not someone_can_answer():
        raise click.ClickException("no terminal to confirm on, so nothing was changed; "
                                   "pass --yes to go ahead without asking")
    if not click.confirm(question, default=False):
        raise click.ClickException("nothing was changed")


def fresh_seed(seed: int | None) -> int:
    return seed if seed is not None else random.randrange(10**6)


def grading_seeds(seed: int | None, settings: Settings) -> Seeding:
    """How `check` and `grade` seed their inputs: from --seed or a fresh one, the only seed
    they show, mixed with the instructor's secret where one is set (grader/engine/secret.py says how
    and why)."""
    from grader.engine.secret import Seeding

    return Seeding.of(fresh_seed(seed), settings)


def chosen_parts(workspace: Workspace, parts: tuple[str, ...]) -> list[str]:
    """The parts named on the command line, checked against the workspace's round (exit 2
    naming the valid ones); all enabled parts when none is named."""
    settings, round_ = workspace.settings, workspace.round
    valid = [p.id for p in round_.parts_for(workspace.flavor)]
    unknown = [p for p in parts if p not in valid]
    if unknown:
        raise click.UsageError(f"{', '.join(unknown)}: not a part of round {round_.id} "
                               f"({workspace.flavor} flavor); its parts: {', '.join(valid)}")
    disabled = [p for p in parts if p not in settings.part_ids]
    if disabled:
        raise click.UsageError(f"not enabled in {workspace.root}/grader.toml: "
                               f"{', '.join(disabled)} "
                               f"(enabled: {', '.join(settings.part_ids)})")
    return list(dict.fromkeys(parts)) or list(settings.part_ids)


def build_request(workspace: Workspace, parts: tuple[str, ...], seed: int | None,
                  timeout_s: float | None, memory_mb: int, device: str = "auto") -> Request:
    """The runner request for a check: the selected (or enabled) parts under the settings."""
    from grader.runner import Request

    settings = workspace.settings
    selected = chosen_parts(workspace, parts)
    weights = settings.weights()
    return Request(
        id="check", root=str(workspace.root), round=workspace.round.id, flavor=workspace.flavor,
        parts=selected, **grading_seeds(seed, settings).request_seeds(workspace.round,
                                                                       workspace.root),
        timeout_s=settings.timeout(timeout_s),
        memory_mb=memory_mb, weights={p: weights[p] for p in selected}, device=device,
    )


class FiniteSeconds(click.FloatRange):
    """Seconds of at least 0.1 that are a real number: "inf" and "nan" parse as floats, and
    neither is a timeout."""

    def convert(self, value: Any, param: click.Parameter | None,
                ctx: click.Context | None) -> Any:
        seconds = super().convert(value, param, ctx)
        if not math.isfinite(seconds):
            self.fail(f"{value!r} is not a finite number of seconds", param, ctx)
        return seconds


def timeout_option(func: F) -> F:
    return click.option(
        "--timeout", "timeout_s", type=FiniteSeconds(min=0.1, max=MOST["timeout"]),
        help="Seconds each check may take, of CPU time or asleep (default: grader.toml's "
             f"timeout, else {DEFAULT_TIMEOUT_S:g}).",
    )(func)


def memory_option(func: F) -> F:
    return click.option(
        "--memory-mb", type=click.IntRange(min=64, max=MOST_MEMORY_MB), default=DEFAULT_MEMORY_MB,
        show_default=True,
        help="Extra memory the code under test may allocate per part.",
    )(func)


part_argument = click.argument("parts", nargs=-1, metavar="[PARTS]...")
seed_option = click.option("--seed", type=click.IntRange(min=0),
                           help="Seed for the random inputs (default: a fresh one).")


def flavor_of(round_: Round, flavor: str | None) -> str:
    """--flavor, checked against the round (exit 2 naming its flavors); else its default."""
    if flavor is None:
        return round_.default_flavor
    if flavor not in round_.flavors:
        raise click.BadParameter(f"round {round_.id} has no {flavor!r} flavor; its flavors: "
                                 f"{', '.join(round_.flavors)}", param_hint="--flavor")
    return flavor


INTERRUPTED = 130
"""The exit status of a command stopped by Ctrl-C: 128 + SIGINT, as a shell reports it."""


class GraderGroup(click.Group):
    """Ctrl-C (or a prompt it broke off) ends any command with one line, "Interrupted.", and
    exit status 130, as a shell would report it: not click's "Aborted!" and 1, which read like
    a failed check. What the command was doing cleans up on the way out (the `with` blocks);
    watch and `mock status --watch` catch it themselves, since Ctrl-C is how they stop."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except (KeyboardInterrupt, click.Abort):
            click.echo("Interrupted.", err=True)
            raise click.exceptions.Exit(INTERRUPTED) from None


@click.group(cls=GraderGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="grader")
def cli() -> None:
    """Autograder for the rounds of an ML-infrastructure interview loop: prefix matrix
    products with hand-written autograd, and more (`grader rounds`).

    Fill in the stubs under exercises/, then run `grader check` (or `grader check part3`).
    """


@cli.command("rounds")
def list_rounds() -> None:
    """List the installed rounds: id, title, parts, minutes, flavors."""
    from grader.render import views

    views.render_rounds(console(), list(installed().values()))


def round_named(round_id: str) -> Round:
    try:
        return installed()[round_id]
    except KeyError:
        raise click.BadParameter(f"unknown round {round_id!r}; installed rounds: "
                                 f"{', '.join(installed())}", param_hint="--round") from None


@cli.command()
@click.argument("directory", type=click.Path(path_type=Path))
@click.option("--round", "round_id", default=DEFAULT_ROUND, show_default=True,
              help="The round to practise (`grader rounds` lists them).")
@click.option("--flavor", help="torch: tensors in and out, autograd checks; numpy: arrays in "
              "and out (default: the round's first; `grader rounds` lists each round's).")
@click.option("--notebook", is_flag=True, help="Also write a starter notebook (Jupyter or "
              "Colab): each part's contract, and its stub in a cell that saves and checks it.")
def init(directory: Path, round_id: str, flavor: str | None, notebook: bool) -> None:
    """Create a fresh workspace at DIRECTORY (never overwrites existing work)."""
    from grader.candidate.notebook import write_starter

    round_ = round_named(round_id)
    try:
        workspace = init_workspace(directory, flavor_of(round_, flavor), round_id=round_.id)
    except WorkspaceError as exc:
        raise click.ClickException(str(exc)) from exc
    first = round_.parts_for(workspace.flavor)[0].id
    click.echo(f"Created a {workspace.flavor} workspace for the {round_.id} round at "
               f"{workspace.root}")
    written = write_starter(workspace) if notebook else None
    if written:
        click.echo(f"Next: open {written} in Jupyter (or upload it to Colab) and run its cells")
    else:
        click.echo(f"Next: cd {directory} && grader check {first}")


@cli.command(help=CHECK_HELP)
@part_argument
@workspace_option
@seed_option
@timeout_option
@memory_option
@click.option("--device", type=click.Choice(["auto", "cpu", "cuda"]), default="auto",
              show_default=True, help="Where the checks timed on a GPU run (auto: CUDA when "
              "available). Without CUDA their timing is shown for information and skipped.")
@click.option("--format", "output_format", type=click.Choice(["text", "json", "classroom"]),
              help="text: the scorecard (default); json: one JSON document (as --json); "
              "classroom: GitHub Classroom's base64 result, one test per check.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON document instead.")
@click.option("--sandbox/--no-sandbox", default=None, help="Run your code in a bubblewrap "
              "sandbox, as `grade` does (the default where this machine can make one: "
              "`grader sandbox` says), or in plain forked processes.")
def check(parts: tuple[str, ...], workspace_dir: Path | None, seed: int | None,
          timeout_s: float | None, memory_mb: int, device: str, output_format: str | None,
          as_json: bool, sandbox: bool | None) -> None:
    from grader.candidate import grading
    from grader.coach import classroom
    from grader.render import report, views
    from grader.runner import GraderCrash, Worker

    if as_json and output_format not in (None, "json"):
        raise click.UsageError(f"--json means --format json, not --format {output_format}")
    shown = "json" if as_json else output_format or "text"
    workspace = resolve_workspace(workspace_dir)
    request = build_request(workspace, parts, seed, timeout_s, memory_mb, device)
    sandbox = check_sandboxed(sandbox)
    out = console()
    try:
        with grader_files_guarded(sandbox), \
                Worker(sandbox=True, first=request) if sandbox else Worker() as worker:
            if shown != "text" or out.is_jupyter:  # a notebook shows the scorecard alone
                graded = grading.grade(workspace, request, worker, now)
            else:
                with out.status("grading…") as status:
                    graded = grading.grade(workspace, request, worker, now, lambda part, c:
                                           status.update(f"grading {part}: {c.id} {c.status}"))
    except GraderCrash as exc:
        raise click.ClickException(exc.report) from exc
    if shown == "text":
        views.present(out, workspace, graded, now, terminal_ask(out))
    else:
        click.echo(report.render_json(graded.result, mock=graded.mock_json()) if shown == "json"
                   else classroom.encode(classroom.document(graded.result)))
        grading.conduct_followups(workspace, graded, now, None)
    sys.exit(0 if graded.result.all_passed else 1)


@cli.command("list")
@workspace_option
def list_parts(workspace_dir: Path | None) -> None:
    """Show the round's parts, their files and time budgets, and your last result on each."""
    from grader.engine import state
    from grader.render import report

    workspace = resolve_workspace(workspace_dir)
    report.render_part_list(console(), workspace, state.last_results(workspace))


def one_part(workspace: Workspace, part: str) -> str:
    return chosen_parts(workspace, (part,))[0]


@cli.command()
@click.argument("part")
@workspace_option
def hint(part: str, workspace_dir: Path | None) -> None:
    """Show the next hint for PART: a nudge, then the approach, then a near-solution."""
    from grader.engine import state
    from grader.render import report

    workspace = resolve_workspace(workspace_dir)
    chosen = workspace.round.part(one_part(workspace, part))
    available = len(chosen.hints)
    level = guarded(mock.take_hint, workspace, chosen.id, available, now())
    if level is None:
        level = state.take_hint(workspace, chosen.id, available)
    report.render_hint(console(), chosen, level, workspace.flavor)


SOLUTION_HELP = """Show the reference solution of PART, once your last check of it passed.

With --force it is shown before that; a running mock round records it and counts it as a hint.
"""

MOCK_HELP = """Rehearse the interview: a timed round with a budget per part, the interviewer's
follow-up questions, and a report.

`grader mock start` starts the clock; every `grader check` (or `grader watch` run) then records
an attempt (time, part, score, hints used, a snapshot of the file), and the first full pass of
a part brings the interviewer's follow-up. `grader mock end` writes the report to
.grader/mock/<round>/report.md and report.json.
"""

MOCK_END_HELP = """End the round and show its report (saved as markdown and JSON).

A part's time runs from the previous part's first pass (the start, for the first part) to its
own first full pass; over_budget means that time exceeded the part's budget. Ending a round that
already ended shows its report again.
"""

WATCH_HELP = """Re-run the checks each time an exercise file is saved, and redraw the scorecard.

PARTS as for `grader check` (default: all enabled). The seed stays fixed for the whole watch,
so a change in the results comes from your code. Shows the mock round's clock when one runs.
Ctrl-C stops.
"""


@cli.command(help=SOLUTION_HELP)
@click.argument("part")
@workspace_option
@click.option("--force", is_flag=True, help="Show it even though the part has not passed.")
def solution(part: str, workspace_dir: Path | None, force: bool) -> None:
    from grader.engine import state
    from grader.render import views

    workspace = resolve_workspace(workspace_dir)
    part = one_part(workspace, part)
    last = state.last_results(workspace).get(part)
    passed = bool(last and last.get("full"))
    if not passed and not force:
        seen = (f"your last check scored {points_of(last['score'], last['max_score'])}"
                if last else "it has not been checked yet")
        raise click.ClickException(
            f"{part} has not passed yet ({seen}); the reference is shown once it does. Try "
            f"`grader hint {part}`, or `grader solution {part} --force` (a mock round counts "
            "that as a hint).")
    guarded(mock.record_solution, workspace, part, not passed, now())
    chosen = workspace.round.part(part)
    views.render_solution(console(), chosen,
                          workspace.round.reference_file(chosen, workspace.flavor),
                          forced=not passed)


def explain_round(workspace_dir: Path | None, round_id: str | None) -> Round:
    """--round, else the workspace's round, else the default (explain works anywhere)."""
    if round_id:
        return round_named(round_id)
    try:
        if workspace_dir:
            return load_workspace(workspace_dir, require_exercises=False).round
        return find_workspace(require_exercises=False).round
    except (WorkspaceError, RoundError):
        return installed()[DEFAULT_ROUND]


@cli.command()
@click.argument("topic", required=False)
@click.option("--no-demo", is_flag=True, help="Skip the live demonstrations (they need torch).")
@click.option("--round", "round_id", help="Explain a topic of this round (default: the "
              "workspace's).")
@workspace_option
def explain(topic: str | None, no_demo: bool, round_id: str | None,
            workspace_dir: Path | None) -> None:
    """Explain an idea the hints and follow-ups refer to, with live torch demonstrations.

    Without TOPIC, list the round's topics.
    """
    from grader.candidate import explain as explaining
    from grader.engine import prose
    from grader.render import views

    out = console()
    round_ = explain_round(workspace_dir, round_id)
    docs = prose.topics(round_)
    if topic is None:
        views.render_topic_list(out, round_, list(docs.values()))
        return
    if topic not in docs:
        raise click.UsageError(f"round {round_.id} has no topic {topic!r}; its topics: "
                               f"{', '.join(docs)}")
    chosen = docs[topic]
    views.render_topic(out, chosen, None if no_demo else explaining.run_demos(chosen))


@cli.command(help=WATCH_HELP)
@part_argument
@workspace_option
@seed_option
def watch(parts: tuple[str, ...], workspace_dir: Path | None, seed: int | None) -> None:
    from grader.render import watch_screen

    workspace = resolve_workspace(workspace_dir)
    request = build_request(workspace, parts, seed, None, DEFAULT_MEMORY_MB)
    out = console()
    try:
        with grader_files_guarded(sandboxed=False) as verify:
            watch_screen.run_watch(workspace, request, out, now, terminal_ask(out),
                                   verify=verify)
    except KeyboardInterrupt:
        out.print("Stopped watching.")


@cli.group("mock", help=MOCK_HELP)
def mock_group() -> None:
    pass


@mock_group.command("start")
@click.option("--minutes", type=click.FloatRange(min=1, max=MOST["mock.minutes"]), default=None,
              help="Length of the round (default: grader.toml's [mock] minutes, else the "
              "round's own, as `grader rounds` lists them); the part budgets scale with it.")
@click.option("--force", is_flag=True,
              help="End a running round (its report is saved) without asking.")
@workspace_option
def mock_start(minutes: float | None, force: bool, workspace_dir: Path | None) -> None:
    """Start the clock of a mock round."""
    from grader.render import views

    workspace = resolve_workspace(workspace_dir)
    out = console()
    running = guarded(mock.current_round, workspace)
    if running is not None:
        elapsed = views.fmt_clock(running.elapsed_s(now()))
        if not force and not someone_can_answer(needs_screen=True):
            raise click.ClickException(
                f"a mock round started {elapsed} ago is still running; end it with `grader "
                "mock end`, or pass --force to end it and start a new one")
        if not force and not click.confirm(f"A mock round started {elapsed} ago is still "
                                           "running. End it (its report is saved) and start a "
                                           "new one?"):
            raise click.ClickException("the running round goes on; nothing was changed")
        ended = guarded(mock.end_round, workspace, now(), views.report_markdown)
        out.print(f"Ended the running round; its report: {ended.markdown_path}", markup=False)
    views.render_round_started(out, guarded(mock.start_round, workspace, now(), minutes))


@mock_group.command("status")
@click.option("--watch", "live", is_flag=True,
              help="A live countdown, redrawn every second, until Ctrl-C or the round ends.")
@workspace_option
def mock_status(live: bool, workspace_dir: Path | None) -> None:
    """Show the round's clock and where each part stands against its budget."""
    from grader.render import views

    workspace = resolve_workspace(workspace_dir)
    out = console()
    round_ = guarded(mock.load_round, workspace)
    if round_ is None or not round_.running:
        views.render_no_round(out, round_)
    elif not live:
        views.render_round(out, round_, now())
    else:
        try:
            views.countdown(out, lambda: guarded(mock.current_round, workspace), now,
                            time.sleep)
        except KeyboardInterrupt:
            out.print("Stopped.")


@mock_group.command("end", help=MOCK_END_HELP)
@click.option("--json", "as_json", is_flag=True, help="Print the report as one JSON document.")
@workspace_option
def mock_end(as_json: bool, workspace_dir: Path | None) -> None:
    from grader.render import views

    workspace = resolve_workspace(workspace_dir)
    ended = guarded(mock.end_round, workspace, now(), views.report_markdown)
    if as_json:
        click.echo(json.dumps(ended.report.to_json(), indent=2))
    else:
        views.render_report(console(), ended)

RESET_HELP = """Put pristine stubs back: the PARTS named, or everything with --all.

The stubs come from the installed grader (not from git), in the workspace's flavor. Before any
file changes, every file under exercises/ and the progress records (last results, hints taken)
are copied to .grader/backups/<timestamp>/, so `grader restore` undoes a reset. --all gives a
fresh workspace: it also removes files you added under exercises/ (they are in the backup) and
forgets last results and hints. On a terminal you are asked first; without one, nothing changes
unless --yes is given (exit 1).
"""

GRADE_HELP = """Grade many submissions at once, in parallel, each as isolated as `grader check`.

A SUBMISSION is a workspace folder, a folder holding the round's exercise files, or a .zip of
either; a folder that is none of these counts as a folder of submissions (each subfolder and
.zip in it; a symbolic link there is refused, never followed). Settings (round, flavor, enabled
parts, points, timeout, secret) come from --config, else from the grader.toml of the current
folder or its parents, else the defaults; a candidate's own grader.toml is never obeyed, except
that without a flavor from the instructor each submission is graded in the flavor it declares.
A broken submission gets its own row and never stops the batch. Each submission's files are
scanned for constructs no solution needs; what is found is flagged for review and changes no
score. The instructor's secret (GRADER_SECRET, else the settings' `secret`) is mixed into the
seed: the seed reported is the one given (or drawn), and --seed with it grades the same inputs
again only under the same secret. With --cluster (or [cluster] address in the settings), the
submissions are graded by the workers of that Dask scheduler instead of --jobs processes here
(docs/cluster.md). Exit status: 0 when every submission got a row, 1 when the grader itself
failed on one, 2 when a SUBMISSION does not exist or the cluster cannot grade.
"""

SELFCHECK_HELP = """Prove the exercises and the checks agree: every pristine stub fails every
check and every reference solution passes every check, in every round and flavor.

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
    from grader.candidate import backups
    from grader.render import instructor_report

    if parts and reset_all:
        raise click.UsageError("name the parts to reset or pass --all, not both")
    if not parts and not reset_all:
        raise click.UsageError("name the parts to reset (e.g. `grader reset part1`), or pass "
                               "--all for the whole workspace")
    workspace = resolve_workspace(workspace_dir, require_exercises=False)
    targets = None if reset_all else chosen_parts(workspace, parts)
    out = console()
    try:
        changes = backups.plan_reset(workspace, targets)
        instructor_report.render_changes(out, f"Reset in {workspace.root}", changes)
        confirm_or_stop(yes, "Reset these files? (the current ones are backed up first)")
        outcome = backups.reset(workspace, targets)
    except WorkspaceError as exc:
        raise click.ClickException(str(exc)) from exc
    instructor_report.render_outcome(out, "reset", outcome, workspace.root)


@cli.command("backups")
@workspace_option
def list_backups(workspace_dir: Path | None) -> None:
    """List the backups that reset and restore made, newest last."""
    from grader.candidate import backups
    from grader.render import instructor_report

    workspace = resolve_workspace(workspace_dir, require_exercises=False)
    instructor_report.render_backups(console(), backups.list_backups(workspace),
                                     backups.backups_root(workspace))


@cli.command()
@click.argument("backup", required=False)
@click.option("--yes", "-y", is_flag=True, help="Do not ask for confirmation.")
@workspace_option
def restore(backup: str | None, yes: bool, workspace_dir: Path | None) -> None:
    """Bring back the files of BACKUP (a name from `grader backups`; default: the latest).

    The current files are backed up first, so a restore can be undone like a reset. On a
    terminal you are asked first; without one, nothing changes unless --yes is given (exit 1).
    """
    from grader.candidate import backups
    from grader.render import instructor_report

    workspace = resolve_workspace(workspace_dir, require_exercises=False)
    out = console()
    try:
        chosen = backups.find_backup(workspace, backup)
        changes = backups.plan_restore(workspace, chosen)
        instructor_report.render_changes(out, f"Restore {chosen.name} ({chosen.reason})",
                                         changes)
        confirm_or_stop(yes, "Restore these files? (the current ones are backed up first)")
        outcome = backups.restore(workspace, chosen)
    except WorkspaceError as exc:
        raise click.ClickException(str(exc)) from exc
    instructor_report.render_outcome(out, "restore", outcome, workspace.root)


def instructor_settings(config_file: Path | None,
                        round_id: str | None = None) -> tuple[Settings, Path | None]:
    """Settings from --config, else the nearest grader.toml, else the round's defaults (and
    then no flavor is imposed: each submission is graded in its own)."""
    path = config_file or find_config()
    if path is None:
        round_ = round_named(round_id or DEFAULT_ROUND)
        return Settings(round_, round_.default_flavor, flavor_given=False), None
    try:
        settings = load_config(path)
    except WorkspaceError as exc:
        raise click.ClickException(str(exc)) from exc
    if round_id and round_id != settings.round.id:
        raise click.UsageError(f"--round {round_id}, but {path} is for round {settings.round.id}")
    return settings, path


@cli.command(help=GRADE_HELP)
@click.argument("submissions", nargs=-1, required=True,
                type=click.Path(exists=True, path_type=Path))
@jobs_option
@click.option("--json", "as_json", is_flag=True,
              help='Print {"round", "submissions": [...]} as JSON instead of the table.')
@click.option("--csv", "csv_file", type=click.Path(dir_okay=False, path_type=Path),
              help="Also write one CSV line per submission to this file.")
@click.option("--gradescope", "gradescope_file", type=click.Path(dir_okay=False, path_type=Path),
              help="Write Gradescope's results.json here (one SUBMISSION), updated as each "
              "part finishes.")
@click.option("--report", "report_file", type=click.Path(dir_okay=False, path_type=Path),
              help="Also write the cohort report, one self-contained HTML file, here (needs "
              f"the [report] extra: {REPORT_INSTALL}).")
@click.option("--config", "config_file",
              type=click.Path(exists=True, dir_okay=False, path_type=Path),
              help="The instructor's grader.toml (default: found from the current folder up).")
@click.option("--round", "round_id", help="The round the submissions are for (default: the "
              "config's, else prefix-products).")
@click.option("--flavor", help="Grade every submission in this flavor (default: the config's, "
              "else each submission's own).")
@click.option("--seed", type=click.IntRange(min=0),
              help="Seed for the random inputs, shared by every submission.")
@timeout_option
@memory_option
@click.option("--no-sandbox", is_flag=True, help="Run the submissions' code without the "
              "sandbox, in processes forked from the grader: a submission could then forge "
              "its numbers or touch another's.")
@click.option("--cluster", "cluster_address", metavar="ADDRESS",
              help="Grade on the workers of this Dask scheduler (tcp://HOST:PORT; default: the "
              "settings' [cluster] address, else here). Needs the [cluster] extra.")
def grade(submissions: tuple[Path, ...], jobs: int, as_json: bool, csv_file: Path | None,
          gradescope_file: Path | None, report_file: Path | None, config_file: Path | None,
          round_id: str | None, flavor: str | None, seed: int | None, timeout_s: float | None,
          memory_mb: int, no_sandbox: bool, cluster_address: str | None) -> None:
    from grader.coach.batch import (
        BatchListener,
        Fanout,
        GradingConfig,
        batch_document,
        grade_submissions,
    )
    from grader.coach.cluster import ClusterError
    from grader.coach.gradescope import GradescopeWriter
    from grader.engine.state import write_bytes_atomic
    from grader.render import instructor_report
    from grader.runner.sandbox import SandboxError

    if gradescope_file and len(submissions) != 1:
        raise click.UsageError("--gradescope grades exactly one SUBMISSION")
    refused_output("--csv", csv_file, "csv")
    refused_output("--report", report_file, "report")
    refused_output("--gradescope", gradescope_file, "gradescope")
    if report_file:
        report_extra()
    settings, config_path = instructor_settings(config_file, round_id)
    if flavor:
        settings = settings.with_flavor(flavor_of(settings.round, flavor))
    err = Console(stderr=True, highlight=False)
    if no_sandbox:
        err.print("grading WITHOUT a sandbox (--no-sandbox): a submission could forge its "
                  "numbers or change another's", style="bold yellow")
    seeding = grading_seeds(seed, settings)
    config = GradingConfig(settings=settings, seed=seeding.given, seeding=seeding,
                           timeout_s=settings.timeout(timeout_s), memory_mb=memory_mb,
                           sandbox=not no_sandbox)
    address = cluster_address or settings.cluster_address
    if address and given("jobs"):
        raise click.UsageError(f"--jobs sets how many grade here side by side; on the cluster "
                               f"at {address} its workers' threads do: drop --jobs")
    graders = cluster_graders(address, config, err) if address else None
    listeners: list[BatchListener] = []
    if gradescope_file:
        listeners.append(GradescopeWriter(
            gradescope_file, settings.gradescope_visibility,
            {"round": settings.round.id, **config.seeds(), "grader_version": __version__},
            [p.file for p in settings.parts]))
    try:
        with grader_files_guarded(config.sandbox), \
                instructor_report.BatchProgress(err, len(config.parts)) as progress:
            rows = grade_submissions(list(submissions), config, jobs,
                                     Fanout(progress, *listeners),
                                     expand_folders=gradescope_file is None, graders=graders)
    except ClusterError as exc:
        raise ClusterFailure(str(exc)) from exc
    except SandboxError as exc:
        raise no_sandbox_here(str(exc), "pass --no-sandbox to grade without one (a submission "
                              "could then forge its numbers)") from exc
    if csv_file:
        write_bytes_atomic(csv_file,
                           instructor_report.batch_csv(rows, list(config.columns)).encode())
    if report_file:
        write_cohort_report(report_file, batch_document(rows, config))
    if as_json:
        click.echo(instructor_report.batch_json(rows, config))
    else:
        instructor_report.render_batch(console(), rows, config, config_path)
    sys.exit(1 if any(row.status == "error" for row in rows) else 0)


def refused_output(option: str, path: Path | None, kind: OutputKind) -> None:
    """A usage error, before any work, where `path` holds a file the output would destroy."""
    from grader.engine.state import replaces_only_its_own

    why = replaces_only_its_own(path, kind) if path is not None else None
    if why is not None:
        raise click.UsageError(f"{option}: {why}")


def given(parameter: str) -> bool:
    """Whether the current command's `parameter` was written on the command line (not its
    default, nor the environment's)."""
    source = click.get_current_context().get_parameter_source(parameter)
    return source is click.core.ParameterSource.COMMANDLINE


class ClusterFailure(click.ClickException):
    """The cluster cannot grade (distributed missing, no scheduler, no worker that may):
    exit status 2, as for a broken setup."""

    exit_code = 2


def cluster_graders(address: str, config: GradingConfig, err: Console) -> StartGraders:
    """The graders of `grade --cluster`, which tell the coach of each worker that refuses;
    ClusterFailure at once where distributed is not installed."""
    from grader.coach.cluster import ClusterError, ClusterGraders, require_distributed

    try:
        require_distributed()
    except ClusterError as exc:
        raise ClusterFailure(str(exc)) from exc

    def refused(worker: str, why: str) -> None:
        err.print(f"worker {worker} will not grade: {why}", style="yellow", markup=False)

    return lambda count: ClusterGraders(address, config, refused)


class IntegrityFailure(click.ClickException):
    """The grader's own files are not trustworthy: exit status 2, as for a broken setup."""

    exit_code = 2


@contextmanager
def grader_files_guarded(sandboxed: bool) -> Iterator[Callable[[], None]]:
    """Refuse to grade with a grader whose installed files changed, and, where the code under
    test runs outside a sandbox, fail the command if any of its files changed while it ran
    (grader/engine/integrity.py), however the run ended (a crash or a Ctrl-C included); a
    sandbox shows them all to that code read-only. Yields the after-run check itself, for a
    command that runs code again and again (watch)."""
    from grader.engine.integrity import (
        IntegrityError,
        check_installed,
        check_recorded,
        check_unchanged,
    )

    try:
        before = None if sandboxed else check_installed()
        if sandboxed:
            check_recorded()
    except IntegrityError as exc:
        raise IntegrityFailure(str(exc)) from exc
    if before is None:
        yield lambda: None
        return

    def verify() -> None:
        try:
            check_unchanged(before)
        except IntegrityError as exc:
            raise IntegrityFailure(str(exc)) from exc

    try:
        yield verify
    finally:
        verify()


def check_sandboxed(asked: bool | None) -> bool:
    """Whether `check` runs the code in a sandbox: as asked, else wherever one can be made
    (saying so, once, on stderr, where none can: the grader's files are then guarded by the
    integrity checks alone)."""
    if asked is False:
        return False
    from grader.runner.sandbox import support

    found = support()
    if found.usable:
        return True
    if asked:
        raise no_sandbox_here(found.why, "run `grader check --no-sandbox`")
    click.echo(f"note: no sandbox here ({found.why}); your code runs in plain forked "
               "processes", err=True)
    return False


def no_sandbox_here(why: str, instead: str) -> click.ClickException:
    return click.ClickException(f"cannot make a sandbox on this machine: {why}; {instead}")


def report_extra() -> None:
    """The [report] extra is there, or one line saying how to install it (exit 1)."""
    from grader.render.cohort_report import ReportError, require_extra

    try:
        require_extra()
    except ReportError as exc:
        raise click.ClickException(str(exc)) from exc


def write_cohort_report(path: Path, doc: BatchDoc) -> None:
    from grader.render.cohort_report import write_report

    try:
        write_report(path, doc)
    except OSError as exc:
        raise click.ClickException(f"cannot write the report to {path}: {exc.strerror}") \
            from exc
    click.echo(f"cohort report ({len(doc['submissions'])} submissions): {path}", err=True)


REPORT_HELP = f"""Write the cohort report of a saved `grader grade --json` (RESULTS): one
self-contained HTML file with the score distributions, each check's pass rate, the named
mistakes ranked by how many submissions made them, time-outs, crashes and review flags, and
every submission's scorecard.

Needs the [report] extra: {REPORT_INSTALL}.
"""


@cli.command(help=REPORT_HELP)
@click.argument("results", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--output", "-o", "output", type=click.Path(dir_okay=False, path_type=Path),
              help="The HTML file to write (default: RESULTS with the suffix .html).")
def report(results: Path, output: Path | None) -> None:
    from grader.coach.cohort import CohortError, read_results

    report_extra()
    try:
        doc = read_results(results)
    except CohortError as exc:
        raise click.ClickException(str(exc)) from exc
    target = output or results.with_suffix(".html")
    if target.resolve() == results.resolve():
        raise click.UsageError(f"--output {target} would overwrite RESULTS")
    refused_output("--output", target, "report")
    write_cohort_report(target, doc)


@cli.command(help=SELFCHECK_HELP)
@click.option("--round", "round_ids", multiple=True,
              help="Check only this round (repeatable; default: every installed round).")
@click.option("--flavor", "flavors", multiple=True,
              help="Check only this flavor (repeatable; default: every flavor).")
@seed_option
@timeout_option
@jobs_option
def selfcheck(round_ids: tuple[str, ...], flavors: tuple[str, ...], seed: int | None,
              timeout_s: float | None, jobs: int) -> None:
    from grader.coach.selfcheck import run_selfcheck
    from grader.render import instructor_report

    rounds = [round_named(r) for r in round_ids] or list(installed().values())
    err = Console(stderr=True, highlight=False)
    with err.status("selfcheck: grading the stubs and the references…") as status:
        report = run_selfcheck(rounds, flavors, fresh_seed(seed), timeout_s or DEFAULT_TIMEOUT_S,
                               jobs, lambda name, _: status.update(f"selfcheck: graded {name}"))
    instructor_report.render_selfcheck(console(), report)
    sys.exit(0 if report.ok else 1)


@cli.command()
def sandbox() -> None:
    """Say whether this machine can sandbox submissions (`grade`, `check --sandbox`), and what
    the sandbox is made of: bubblewrap, namespaces, the files it sees, its limits."""
    from grader.render import instructor_report
    from grader.runner.sandbox import support

    found = support()
    instructor_report.render_sandbox(console(), found)
    sys.exit(0 if found.usable else 1)


def main() -> None:
    """The console script: a file the command cannot read or write (a folder where a file
    should be, no permission, a full disk), or a round that cannot be loaded (a coach's round
    on GRADER_ROUNDS_PATH with a mistake in it), or an install without its references, is one
    line and exit status 1, not a traceback."""
    signal.signal(signal.SIGINT, interrupt_once)
    try:
        raise_open_files()
        cli(prog_name="grader")
    except (OSError, RoundError, BundleError) as exc:
        click.echo(error_line(exc), err=True)
        raise SystemExit(1) from None


def interrupt_once(signum: int, frame: object) -> None:
    """Ctrl-C stops a command once. The first press raises KeyboardInterrupt, which the
    command's `with` blocks clean up after (its workers stopped, its files put back) and
    GraderGroup turns into "Interrupted." and 130. Further presses are ignored from then on: a
    person pressing again while that clean-up runs (slow on a busy machine) would otherwise cut
    it short, leave a worker behind, or land in click's own handling and read "Aborted!", exit 1.
    Every clean-up on that path is bounded (a worker gets seconds to stop, then is killed)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    raise KeyboardInterrupt


def error_line(exc: OSError | RoundError | BundleError) -> str:
    """A file the grader cannot use, a round it cannot load, or a folder the install lacks, in
    one line."""
    if isinstance(exc, RoundError | BundleError):
        return f"Error: {one_line(str(exc))}"
    where = f" ({exc.filename})" if exc.filename else ""
    return f"Error: {exc.strerror or exc}{where}"
