"""Rendering results: the rich scorecard and the JSON document. No grading logic lives here.

Every renderer takes the Console to print on, so tests can render into a StringIO at a fixed
width without colour and compare the text.
"""

from __future__ import annotations

import json
from collections import Counter

from rich.console import Console, Group
from rich.markup import escape
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from grader.parts import PARTS, get_part
from grader.results import CheckResult, PartResult, RunResult

STATUS_STYLE: dict[str, tuple[str, str]] = {
    "passed": ("✓ passed", "green"),
    "failed": ("✗ failed", "red"),
    "error": ("! error", "bold red"),
    "timeout": ("⏱ timeout", "yellow"),
    "skipped": ("– skipped", "dim"),
}

HONESTY_NOTE = (
    "These are hidden checks against reference implementations: passing them is strong "
    "evidence, not proof. A skipped check is not a pass."
)
OUTPUT_LINES = 12
NOT_IMPLEMENTED = "not implemented yet"


def status_text(status: str) -> Text:
    label, style = STATUS_STYLE[status]
    return Text(label, style=style)


def _points(score: float, max_score: float) -> str:
    return f"{score:.1f}/{max_score:.1f}"


def _trim_output(output: str) -> str:
    lines = output.rstrip().splitlines()
    if len(lines) > OUTPUT_LINES:
        lines = lines[:OUTPUT_LINES] + [f"... ({len(lines) - OUTPUT_LINES} more lines)"]
    return "\n".join(lines)


def check_details(check: CheckResult) -> Group:
    """Message, hint and captured output of one check."""
    body: list[Text] = [Text(check.message or "(no message)")]
    if check.hint:
        body.append(Text.assemble(("hint: ", "bold cyan"), (check.hint, "cyan")))
    if check.output:
        body.append(Text("your code printed:", style="bold dim"))
        body.append(Text(_trim_output(check.output), style="dim"))
    return Group(*body)


def first_failure_panel(check: CheckResult) -> Panel:
    title = Text.assemble(status_text(check.status), "  ", (check.id, "bold"), f"  {check.title}")
    return Panel(check_details(check), title=title, title_align="left", border_style="red")


def part_table(part: PartResult) -> Table:
    table = Table(
        title=f"{part.id} · {part.title}   {_points(part.score, part.max_score)}",
        title_justify="left", title_style="bold", expand=True, show_edge=False,
    )
    table.add_column("status", no_wrap=True, width=11)
    table.add_column("check", ratio=1)
    table.add_column("points", justify="right", no_wrap=True)
    table.add_column("time", justify="right", no_wrap=True)
    for check in part.checks:
        label = Text.assemble((check.title, ""), (f"  {check.id}", "dim"))
        if check.status != "passed" and check.message:
            label.append("\n" + check.message.splitlines()[0][:160], style="dim")
        table.add_row(status_text(check.status), label, _points(check.score, check.max_score),
                      f"{check.duration_s:.2f}s")
    return table


def summary_line(result: RunResult) -> Text:
    counts = Counter(c.status for p in result.parts for c in p.checks)
    pieces = ", ".join(f"{counts[s]} {s}" for s in STATUS_STYLE if counts[s])
    style = "bold green" if result.all_passed else "bold red"
    verdict = "all selected checks passed" if result.all_passed else "not passing yet"
    return Text.assemble(("Score ", "bold"), (_points(result.score, result.max_score), style),
                         f"  ·  {pieces}  ·  ", (verdict, style))


def _worth_a_panel(check: CheckResult) -> bool:
    """Failures with evidence beyond their table line; an untouched stub says it all there."""
    if check.status not in ("failed", "error", "timeout") or is_stub(check):
        return False
    return bool(check.hint or check.output or "\n" in check.message)


def is_stub(check: CheckResult) -> bool:
    return check.message.startswith(NOT_IMPLEMENTED)


def render_scorecard(console: Console, result: RunResult) -> None:
    """The full scorecard: first failure up front, then one table per part, then the score."""
    console.print(Text.assemble(("grader", "bold"), f" · {result.flavor} flavor · seed "
                                f"{result.seed} · hidden checks"))
    failure = result.first_failure()
    if failure:
        console.print(first_failure_panel(failure))
    for part in result.parts:
        console.print(part_table(part))
        for check in part.checks:
            if check is not failure and _worth_a_panel(check):
                console.print(Panel(check_details(check), title=escape(check.id),
                                    title_align="left", border_style="dim"))
    console.print(summary_line(result))
    console.print(Text(HONESTY_NOTE, style="dim"))


def render_json(result: RunResult) -> str:
    return json.dumps(result.to_dict(), indent=2)


def render_part_list(console: Console, last: dict[str, dict[str, float | str]]) -> None:
    """`grader list`: every part with its file, budget and last recorded result."""
    # A Text title: as a str, rich would read "[i]" as markup and print "P = W[0] @ ... @ W".
    table = Table(title=Text("The round: P[i] = W[0] @ ... @ W[i]"), title_justify="left")
    table.add_column("part", no_wrap=True)
    table.add_column("title")
    table.add_column("file", overflow="fold")  # a narrow terminal breaks the path, not hides it
    table.add_column("budget", no_wrap=True)
    table.add_column("last result")
    for part in PARTS:
        record = last.get(part.id)
        if record:
            state = "full marks" if record["full"] else "not passing yet"
            shown = Text(f"{_points(float(record['score']), float(record['max_score']))} "
                         f"{state} ({record['when']})",
                         style="green" if record["full"] else "yellow")
        else:
            shown = Text("not checked yet", style="dim")
        table.add_row(part.id, part.title, f"exercises/{part.file}",
                      f"{part.budget_minutes:g} min", shown)
    console.print(table)


def render_hint(console: Console, part_id: str, level: int) -> None:
    """Hints 1..level of a part, the newest highlighted."""
    part = get_part(part_id)
    names = ("nudge", "approach", "near-solution")
    for index in range(level):
        text = part.hints[index]
        style = "bold" if index == level - 1 else "dim"
        console.print(Panel(Text(text, style=style),
                            title=f"{part.id} hint {index + 1}/{len(part.hints)}: {names[index]}",
                            title_align="left",
                            border_style="cyan" if index == level - 1 else "dim"))
    if level >= len(part.hints):
        console.print(Text("That was the last hint for this part.", style="dim"))
    else:
        console.print(Text(f"Run `grader hint {part.id}` again for the next one.", style="dim"))
