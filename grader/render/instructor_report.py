"""Rendering for the instructor commands: reset plans, backups, batch rows, the self-check.

Like report.py (whose status styles it shares), every renderer takes the Console to print on
and holds no logic beyond layout, so tests can render into a StringIO and compare the text.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.table import Table
from rich.text import Text

from grader.candidate.backups import Backup, Change, Outcome
from grader.coach.batch import BatchListener, GradedRow, GradingConfig, batch_document
from grader.coach.review import flag_text, flags_line
from grader.coach.selfcheck import SOURCES, SelfcheckReport
from grader.engine.results import HONESTY_NOTE, CheckResult, PartResult, points_of, points_text
from grader.engine.safe_text import clean, csv_cell, valid, valid_tree
from grader.engine.safe_text import text as safe
from grader.render.report import STATUS_STYLE, status_text
from grader.render.tables import folding

if TYPE_CHECKING:
    from grader.runner.sandbox import Support

ACTION_STYLE = {"create": "green", "overwrite": "yellow", "remove": "red"}
ROW_STYLE = {"graded": "", "mismatch": "yellow", "broken": "red", "error": "bold red"}


def render_changes(console: Console, title: str, changes: Sequence[Change]) -> None:
    """The files a reset or restore would write or remove."""
    if not changes:
        console.print(f"{title}: nothing to change.")
        return
    console.print(f"{title}:")
    for change in changes:
        console.print(Text.assemble(("  " + change.action.ljust(10), ACTION_STYLE[change.action]),
                                    change.rel))


def render_outcome(console: Console, verb: str, outcome: Outcome, root: Path) -> None:
    """What was done, where the backup went, and the command that undoes it."""
    if outcome.backup is None:
        console.print(f"Nothing to {verb}: the files already match.")
        return
    where = outcome.backup.path.relative_to(root)
    console.print(Text.assemble("Backed up the previous files to ", (str(where), "bold")))
    touched = ", ".join(c.rel for c in outcome.changes)
    console.print(f"{verb.capitalize()}: {touched}")
    console.print(Text(f"Undo with: grader restore {outcome.backup.name}", style="cyan"))


def render_backups(console: Console, backups: Sequence[Backup], folder: Path) -> None:
    """`grader backups`: every backup, newest last, with the parts that held work."""
    if not backups:
        console.print(f"No backups yet (they go to {folder}).")
        return
    table = Table(title=f"Backups in {folder}", title_justify="left")
    for column in ("backup", "created", "reason", "files", "parts with work"):
        table.add_column(column)
    for backup in backups:
        work = ", ".join(backup.changed_parts) or Text("none (pristine stubs)", style="dim")
        name = Text(backup.name, style="bold")
        if backup is backups[-1]:
            name.append("  (latest)", style="cyan")
        table.add_row(name, backup.created.replace("T", " "), backup.reason,
                      str(len(backup.digests)), work)
    console.print(folding(table))
    console.print(Text("Bring one back with `grader restore NAME` (default: the latest); the "
                       "current files are backed up first.", style="dim"))


def _cell(part: PartResult | None) -> Text:
    if part is None:
        return Text("-", style="dim")
    style = "green" if part.passed else "yellow" if part.score > 0 else "red"
    return Text(points_text(part.score), style=style)


def batch_table(rows: Sequence[GradedRow], config: GradingConfig) -> Table:
    """One row per submission: each part's points and the total (out of the header's max)."""
    table = Table(title="Batch results", title_justify="left")
    table.add_column("#", justify="right", no_wrap=True)
    table.add_column("submission", overflow="fold")
    for part_id, weight in config.columns.items():
        table.add_column(f"{part_id}\n/{points_text(weight)}", justify="right", no_wrap=True)
    table.add_column(f"total\n/{points_text(config.max_score)}", justify="right",
                     no_wrap=True)
    table.add_column("status", no_wrap=True)
    for number, row in enumerate(rows, start=1):
        table.add_row(str(number), safe(row.path), *(_cell(row.part(p)) for p in config.columns),
                      Text(points_text(row.score), style="bold"),
                      Text(row.status, style=ROW_STYLE[row.status] or "green"))
    return folding(table)


def _seed_words(config: GradingConfig) -> str:
    """The seed of the batch, and what else its inputs came from (grader/engine/secret.py)."""
    return config.inputs.words()


def render_batch(console: Console, rows: Sequence[GradedRow], config: GradingConfig,
                 settings_from: Path | None) -> None:
    """Where the settings came from, the summary table, what went wrong where and what the
    review scan flagged, the counts, and the honesty note."""
    settings = config.settings
    flavors = (f"every submission in {settings.flavor} (the settings pin it)"
               if settings.flavor_given else "each submission in its own flavor")
    console.print(Text(f"settings from {settings_from or 'the defaults'}; {flavors}",
                       style="dim"))
    console.print(batch_table(rows, config))
    for number, row in enumerate(rows, start=1):
        said = [(row.note, ROW_STYLE[row.status] or "yellow")] if row.notes else []
        if row.flags:
            said.append((flags_line(row.flags), "magenta"))
        for line, style in said:
            console.print(Text.assemble((f"{number:>3} ", "bold"), (clean(row.path), "bold"),
                                        ": ", (clean(line), style)))
    full = sum(1 for r in rows if r.status == "graded" and r.score >= r.max_score - 1e-9)
    broken = sum(1 for r in rows if r.status != "graded")
    flagged = sum(1 for r in rows if r.flags)
    noun = "submission" if len(rows) == 1 else "submissions"
    flavors = " and ".join(sorted({row.flavor for row in rows})) or config.settings.flavor
    console.print(f"{len(rows)} {noun} ({config.round_id} round, {flavors} flavor, "
                  f"{_seed_words(config)}): {full} with full marks, {broken} that could not be "
                  f"graded, {flagged} flagged for review.", markup=False)
    console.print(Text(HONESTY_NOTE, style="dim"))


def batch_json(rows: Sequence[GradedRow], config: GradingConfig) -> str:
    """`grade --json`: every string valid (safe_text.valid_tree), and ASCII, so that it can be
    written whatever a row holds."""
    return json.dumps(valid_tree(batch_document(rows, config)), indent=2)


def batch_csv(rows: Sequence[GradedRow], part_ids: Sequence[str]) -> str:
    """One line per submission, for a gradebook: scores per part, total, status, notes and
    every review flag. Text cells are cleaned and kept from reading as formulas (csv_cell);
    the scores are numbers. The whole text is valid, so it can be written whatever a row
    holds."""
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    writer.writerow(["path", "status", "score", "max_score", *part_ids, "notes", "flags"])
    for row in rows:
        scores = [points_text(p.score) if (p := row.part(part_id)) else ""
                  for part_id in part_ids]
        flags = "; ".join(map(flag_text, row.flags or ()))
        writer.writerow([csv_cell(row.path), row.status, points_text(row.score),
                         points_text(row.max_score), *scores, csv_cell(row.note), csv_cell(flags)])
    return valid(buffer.getvalue())


class BatchProgress(BatchListener):
    """A rich progress bar over submissions, advancing a share of a row per finished part;
    beside it how many are being graded (a check of theirs came back, their row did not) and
    how many failed (rows `broken` or `error`), the time taken and the time left."""

    def __init__(self, console: Console, parts_per_submission: int) -> None:
        self.progress = Progress(
            TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
            TextColumn("{task.fields[tally]}", markup=False), TimeElapsedColumn(),
            TimeRemainingColumn(),
            TextColumn("{task.fields[current]}", style="dim", markup=False),
            console=console, transient=True, disable=not console.is_terminal,
        )
        self.parts = max(1, parts_per_submission)
        self.task = self.progress.add_task("grading", total=0, current="", tally="")
        self._credited: dict[int, float] = {}
        self._paths: list[str] = []
        self._running: set[int] = set()
        self._failed: set[int] = set()

    def started(self, paths: Sequence[str]) -> None:
        self._paths = list(paths)
        self.progress.update(self.task, total=len(paths))

    def check_done(self, index: int, part_id: str, check: CheckResult) -> None:
        self._running.add(index)
        self.progress.update(self.task, tally=self._tally(),
                             current=f"{clean(Path(self._paths[index]).name)}: {check.id}")

    def part_done(self, index: int, part: PartResult) -> None:
        self._advance(index, 1.0 / self.parts)

    def finished(self, index: int, row: GradedRow) -> None:
        self._running.discard(index)
        if row.status in ("broken", "error"):
            self._failed.add(index)
        else:  # a row graded again replaces the first
            self._failed.discard(index)
        self.progress.update(self.task, tally=self._tally())
        self._advance(index, 1.0 - self._credited.get(index, 0.0))

    def _tally(self) -> str:
        return f"{len(self._running)} running, {len(self._failed)} failed"

    def _advance(self, index: int, amount: float) -> None:
        self._credited[index] = self._credited.get(index, 0.0) + amount
        self.progress.advance(self.task, amount)

    def __enter__(self) -> BatchProgress:
        self.progress.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.progress.stop()


def render_selfcheck(console: Console, report: SelfcheckReport) -> None:
    """One line per graded run, then every violation, then the verdict."""
    table = Table(title=f"grader selfcheck · seed {report.seed}", title_justify="left")
    for column in ("round", "flavor", "source", "checks", "passed", "score", "rule"):
        table.add_column(column)
    for (round_id, flavor, source), result in sorted(
            report.runs.items(), key=lambda kv: (kv[0][0], kv[0][1], SOURCES.index(kv[0][2]))):
        checks = [c for p in result.parts for c in p.checks]
        passed = sum(c.status == "passed" for c in checks)
        rule = "every check fails" if source == "stubs" else "every check passes"
        not_applicable = sum(c.not_applicable for c in checks)
        if not_applicable and source != "stubs":
            rule += f" ({not_applicable} cannot apply here)"
        table.add_row(round_id, flavor, source, str(len(checks)), str(passed),
                      points_of(result.score, result.max_score), rule)
    console.print(folding(table))
    if report.ok:
        console.print(Text("selfcheck passed: every round's data is whole, every stub fails "
                           "every check and every reference passes every check that can apply "
                           "on this machine.", style="bold green"))
        return
    console.print(Text(f"selfcheck FAILED: {len(report.violations)} violation(s)",
                       style="bold red"))
    for v in report.violations:
        where = f"  {v.round} {v.flavor} {v.source}: "
        if v.source == "data":
            console.print(Text.assemble(where, (v.check_id, "bold"), f"  {v.message}"[:300]))
            continue
        expected = "should fail" if v.source == "stubs" else "should pass"
        status = status_text(v.status) if v.status in STATUS_STYLE else Text(v.status)
        console.print(Text.assemble(where, (v.check_id, "bold"), f" {expected} but is ", status,
                                    f"  {v.message}"[:200]))


def render_sandbox(console: Console, found: Support) -> None:
    """What the sandbox of `grade` and `check --sandbox` is made of on this machine, or why
    there is none."""
    from grader.runner.sandbox import EXECUTOR_MB, TASKS, TMP_MB

    if not found.usable:
        console.print(Text(f"no sandbox on this machine: {found.why}", style="bold red"))
        return
    table = Table(title="The sandbox on this machine", title_justify="left", show_header=False)
    table.add_column("what", style="bold")
    table.add_column("how")
    table.add_row("bubblewrap", f"{found.bwrap}: works here")
    table.add_row("namespaces", "its own users (nobody inside, no capabilities), PIDs, "
                  "network (none), IPC, UTS and cgroups")
    table.add_row("files", "read-only: the system, Python, the grader without its references, "
                  f"the submission's own files; /tmp: a private tmpfs of {TMP_MB} MiB")
    if found.cgroup:
        caps = (f"a cgroup ({found.cgroup}) for the whole sandbox: the request's memory + "
                f"{EXECUTOR_MB} MiB for the grader's side, {TASKS} tasks, and "
                + ("one CPU share for all its processes, as one process has" if found.cpu_share
                   else "no CPU share of its own (no cpu controller here): its processes "
                   "compete for the CPU one by one"))
    else:
        caps = (f"no cgroup ({found.cgroup_why}): {TASKS} tasks for the sandbox's user "
                "(RLIMIT_NPROC, counted per user namespace) and each process's address-space "
                "cap")
    table.add_row("limits", caps)
    table.add_row("lifetime", "killed with everything in it when its submission is graded")
    console.print(folding(table))
