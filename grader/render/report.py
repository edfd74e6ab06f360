"""Rendering results: the rich scorecard and the JSON document. No grading logic lives here.

Every renderer takes the Console to print on, so tests can render into a StringIO at a fixed
width without colour and compare the text.
"""

from __future__ import annotations

import json
from collections import Counter
from datetime import date

from rich.console import Console, Group
from rich.markup import escape
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from grader.engine.flavored import for_flavor
from grader.engine.results import (
    HONESTY_NOTE,
    SHORT_OF_MEMORY,
    CheckResult,
    ClockDoc,
    PartResult,
    RunResult,
    points_of,
    undecided_note,
)
from grader.engine.rounds import Part, get_round
from grader.engine.safe_text import clean, valid_tree
from grader.engine.safe_text import text as safe
from grader.engine.triage import FAILING, Trouble, triage
from grader.engine.workspace import Workspace
from grader.render.tables import folding

STATUS_STYLE: dict[str, tuple[str, str]] = {
    "passed": ("✓ passed", "green"),
    "failed": ("✗ failed", "red"),
    "error": ("! error", "bold red"),
    "timeout": ("⏱ timeout", "yellow"),
    "skipped": ("– skipped", "dim"),
    "undecided": ("? too busy", "magenta"),
}

OUTPUT_LINES = 12


SHORT_OF_MEMORY_STYLE = ("? low mem", "magenta")
"""The label of a check undecided because the machine ran out of memory (SHORT_OF_MEMORY), not
because it was too busy."""


def status_text(status: str) -> Text:
    label, style = STATUS_STYLE[status]
    return Text(label, style=style)


def check_status_text(check: CheckResult) -> Text:
    """A check's status label, which names memory where the machine ran out of it."""
    if check.status == "undecided" and SHORT_OF_MEMORY in check.message:
        return Text(SHORT_OF_MEMORY_STYLE[0], style=SHORT_OF_MEMORY_STYLE[1])
    return status_text(check.status)


def _trim_output(output: str) -> str:
    lines = output.rstrip().splitlines()
    if len(lines) > OUTPUT_LINES:
        lines = lines[:OUTPUT_LINES] + [f"... ({len(lines) - OUTPUT_LINES} more lines)"]
    return "\n".join(lines)


def check_details(check: CheckResult, follows: tuple[CheckResult, ...] = ()) -> Group:
    """Message, hint and captured output of one check, and the failures that follow from it.
    The message and the output carry what the candidate's code raised and printed: they are
    shown as written, without their control sequences (grader/engine/safe_text.py)."""
    body: list[Text] = [safe(check.message or "(no message)")]
    if check.hint:
        body.append(Text.assemble(("hint: ", "bold cyan"), (clean(check.hint), "cyan")))
    if check.output:
        body.append(Text("your code printed:", style="bold dim"))
        body.append(safe(_trim_output(check.output), style="dim"))
    failing = [c.id for c in follows if c.status in FAILING]
    if failing:
        body.append(Text(f"also failing because of this: {', '.join(failing)}", style="dim"))
    return Group(*body)


def part_table(part: PartResult, follows_from: dict[str, str]) -> Table:
    """One row per check: status, check and its title (wrapped, never dropped, on a narrow
    terminal), points. The evidence and hints are in the panels below, once."""
    table = Table(title=safe(f"{part.id} · {part.title}   "
                             f"{points_of(part.score, part.max_score)}"),
                  title_justify="left", title_style="bold", expand=True, show_edge=False,
                  show_header=False, box=None, padding=(0, 1))
    table.add_column("status", no_wrap=True, width=10)
    table.add_column("check", ratio=1, overflow="fold")
    table.add_column("points", justify="right", no_wrap=True)
    for check in part.checks:
        label = safe(check.id, style="bold" if check.status in FAILING else "")
        label.append(clean(f"  {check.title}"), style="dim")
        if check.id in follows_from and check.status in FAILING:
            label.append(clean(f"  (follows from {follows_from[check.id]})"), style="dim")
        table.add_row(check_status_text(check), label, points_of(check.score, check.max_score))
    return folding(table)


def summary_line(result: RunResult) -> Text:
    checks = [c for p in result.parts for c in p.checks]
    counts: Counter[str] = Counter(c.status for c in checks)
    pieces = ", ".join(f"{counts[s]} {s}" for s in STATUS_STYLE if counts[s])
    not_applicable = sum(1 for c in checks if c.not_applicable)
    if not_applicable:
        pieces += " (not graded here)" if not_applicable == counts["skipped"] else \
            f" ({not_applicable} not graded here)"
    style = "bold green" if result.all_passed else "bold red"
    if counts["undecided"]:
        style, verdict = "bold magenta", undecided_note(checks)
    elif not result.all_passed:
        verdict = "not passing yet"
    else:
        verdict = "every graded check passed" if counts["skipped"] else "all checks passed"
    return Text.assemble(("Score ", "bold"), (points_of(result.score, result.max_score), style),
                         f"  ·  {pieces}  ·  ", (verdict, style))


def _part_line(part: PartResult, state: str, style: str) -> Text:
    """One line for a part that has no checks to show: its heading, its points, its state."""
    return Text.assemble(
        (clean(f"{part.id} · {part.title}   {points_of(part.score, part.max_score)}"), "bold"),
        (f"   {state}", style),
    )


def untouched_line(part: PartResult) -> Text:
    return _part_line(part, "not implemented yet", "yellow")


def never_ran_line(trouble: Trouble) -> Text:
    how = "timed out at import" if trouble.root.status == "timeout" else "could not be imported"
    return _part_line(trouble.part, how, "red")


def start_here_panel(round_id: str, part: PartResult) -> Panel:
    file = f"exercises/{get_round(round_id).part(part.id).file}"
    return Panel(
        Text.assemble(f"{file} is still a stub. Read its docstring, fill it in, then run ",
                      (f"grader check {part.id}", "bold"), ". Stuck? ",
                      (f"grader hint {part.id}", "bold"), " gives a nudge."),
        title=Text.assemble(("start here", "bold yellow"), clean(f"  {part.id} · {part.title}")),
        title_align="left", border_style="yellow",
    )


def trouble_panel(console: Console, trouble: Trouble) -> Panel:
    """A root failure: its evidence, hint and printed output, and what follows from it. The
    check's title joins the panel's only where it fits whole."""
    check = trouble.root
    name = f"{trouble.part.id}: every check" if trouble.whole_part else check.id
    title = Text.assemble(check_status_text(check), "  ", (clean(name), "bold"))
    if not trouble.whole_part and title.cell_len + len(check.title) + 10 <= console.width:
        title.append(clean(f"  {check.title}"))
    return Panel(check_details(check, () if trouble.whole_part else trouble.follows),
                 title=title, title_align="left", border_style="red")


def start_with_line(trouble: Trouble) -> Text:
    """Where the last lines on screen point when the panels' order put the likeliest mistake
    higher up: its check and its hint, just above the score."""
    name = trouble.part.id if trouble.whole_part else trouble.root.id
    line = Text.assemble(("start with ", "bold"), (clean(name), "bold"))
    if trouble.root.hint:
        line.append(": ")
        line.append(clean(trouble.root.hint), style="cyan")
    return line


def figures_panel(check: CheckResult) -> Panel:
    """A check whose message is the point, not a failure: the figures of a passed or skipped
    check (part4.timing's table), or the measurements of one the machine was too busy to judge."""
    return Panel(check_details(check), title=safe(check.id), title_align="left",
                 border_style="dim")


def render_scorecard(console: Console, result: RunResult) -> None:
    """The scorecard, laid out for a terminal, where the last lines stay on screen: one compact
    table per part (a stub part, or one that never ran, is one line), then any figures, then
    the failures' panels in the tables' order (part1 first, each part's checks in order), so
    the evidence reads in the order the candidate works through the round; where the likeliest
    mistake's panel is not the last, or its hint is followed by what the code printed, one line
    names it and its hint just above the score."""
    found = triage(result)
    never_ran = {t.part.id: t for t in found.troubles if t.whole_part}
    heading = f" · {result.round} · {result.flavor} flavor · seed {result.seed} · hidden checks"
    console.print(Text.assemble(("grader", "bold"), clean(heading)))
    for part in result.parts:
        if part in found.untouched:
            console.print(untouched_line(part))
        elif part.id in never_ran:
            console.print(never_ran_line(never_ran[part.id]))
        else:
            console.print(part_table(part, found.follows_from))
    for part in result.parts:
        for check in part.checks:
            if (check.status in ("passed", "skipped") and "\n" in check.message
                    or check.status == "undecided"):
                console.print(figures_panel(check))
    panels = [trouble_panel(console, t) for t in found.troubles]
    if found.untouched and (found.first is None or result.parts.index(found.untouched[0])
                            < result.parts.index(found.first.part)):
        panels.insert(0, start_here_panel(result.round, found.untouched[0]))
    for panel in panels:
        console.print(panel)
    # Its hint is far from the last lines where another panel comes after its own, or where
    # what the code printed (up to OUTPUT_LINES, wrapped) follows the hint in its panel.
    if found.first is not None and (found.first is not found.troubles[-1]
                                    or found.first.root.hint and found.first.root.output):
        console.print(start_with_line(found.first))
    console.print(summary_line(result))
    console.print(Text(HONESTY_NOTE, style="dim"))


def render_json(result: RunResult, mock: ClockDoc | None = None) -> str:
    """The documented JSON; during a mock round it gains the round's clock under "mock". Every
    string valid (safe_text.valid_tree), and ASCII, so that it can be written whatever a check
    holds."""
    data = result.to_dict()
    if mock is not None:
        data["mock"] = mock
    return json.dumps(valid_tree(data), indent=2)


def _short_when(when: str, today: date | None = None) -> str:
    """'2026-11-29 17:13' reads as '17:13' on the day itself."""
    day = (today or date.today()).isoformat()
    return when.removeprefix(day).strip() or when


def render_part_list(console: Console, workspace: Workspace,
                     last: dict[str, dict[str, float | str]]) -> None:
    """`grader list`: every part of the workspace's round with its file, budget (the
    workspace's, when it sets one) and last recorded result."""
    round_, settings = workspace.round, workspace.settings
    parts = round_.parts_for(workspace.flavor)
    table = Table(title=f"{round_.id}: {escape(round_.summary)}", title_justify="left",
                  caption="files: " + ", ".join(f"exercises/{p.file}" for p in parts),
                  caption_justify="left")
    for column in ("part", "title", "budget", "last result", "checked"):
        table.add_column(column, no_wrap=column in ("part", "budget", "checked"),
                         min_width=24 if column == "last result" else None)
    for part in parts:
        record = last.get(part.id)
        if record:
            state = "full marks" if record["full"] else "not passing yet"
            shown = Text(f"{points_of(float(record['score']), float(record['max_score']))} "
                         f"{state}", style="green" if record["full"] else "yellow")
            when = _short_when(str(record["when"]))
        else:
            shown, when = Text("not checked yet", style="dim"), ""
        table.add_row(part.id, part.title, f"{settings.budget_minutes(part):g} min", shown, when)
    console.print(folding(table))


def render_hint(console: Console, part: Part, level: int, flavor: str) -> None:
    """Hints 1..level of a part as a candidate in `flavor` reads them, the newest
    highlighted."""
    for index in range(level):
        newest = index == level - 1
        console.print(Panel(Text(for_flavor(part.hints[index], flavor),
                                 style="bold" if newest else "dim"),
                            title=f"{part.id} hint {index + 1}/{len(part.hints)}: "
                                  f"{part.hint_name(index)}",
                            title_align="left", border_style="cyan" if newest else "dim"))
    if level >= len(part.hints):
        console.print(Text("That was the last hint for this part.", style="dim"))
    else:
        console.print(Text(f"Run `grader hint {part.id}` again for the next one.", style="dim"))
