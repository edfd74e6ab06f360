"""Rendering results: the rich scorecard and the JSON document. No grading logic lives here.

Every renderer takes the Console to print on, so tests can render into a StringIO at a fixed
width without colour and compare the text.
"""

from __future__ import annotations

import json
from collections import Counter
from datetime import date
from typing import Any

from rich.console import Console, Group
from rich.markup import escape
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from grader.results import CheckResult, PartResult, RunResult
from grader.rounds import Part, get_round
from grader.workspace import Workspace

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


def check_label(part: PartResult, check: CheckResult) -> str:
    """A check's name where it is one test among many (Gradescope, GitHub Classroom)."""
    return f"{part.id} {part.title}: {check.title} ({check.id})"


def check_text(check: CheckResult) -> str:
    """What a candidate reads under one test outside the terminal: the status, the message, a
    hint, their prints."""
    lines = [f"[{check.status}] {check.message}".rstrip()]
    if check.hint:
        lines.append(f"hint: {check.hint}")
    if check.output:
        lines.append(f"your code printed:\n{check.output.rstrip()}")
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
    checks = [c for p in result.parts for c in p.checks]
    counts = Counter(c.status for c in checks)
    pieces = ", ".join(f"{counts[s]} {s}" for s in STATUS_STYLE if counts[s])
    not_applicable = sum(1 for c in checks if c.not_applicable)
    if not_applicable:
        pieces += " (not graded here)" if not_applicable == counts["skipped"] else \
            f" ({not_applicable} not graded here)"
    style = "bold green" if result.all_passed else "bold red"
    if not result.all_passed:
        verdict = "not passing yet"
    else:
        verdict = "every graded check passed" if counts["skipped"] else "all checks passed"
    return Text.assemble(("Score ", "bold"), (_points(result.score, result.max_score), style),
                         f"  ·  {pieces}  ·  ", (verdict, style))


def _worth_a_panel(check: CheckResult) -> bool:
    """Failures with evidence beyond their table line (an untouched stub says it all there),
    and checks that report figures (part4.timing's table), which a passed or skipped row
    would otherwise hide."""
    if check.status in ("passed", "skipped"):
        return "\n" in check.message
    if is_stub(check):
        return False
    return bool(check.hint or check.output or "\n" in check.message)


def is_stub(check: CheckResult) -> bool:
    return check.not_implemented


def untouched(part: PartResult) -> bool:
    """Every check failed only because the stub is still a stub."""
    return bool(part.checks) and all(is_stub(c) for c in part.checks)


def untouched_line(part: PartResult) -> Text:
    return Text.assemble(
        (f"{part.id} · {part.title}   {_points(part.score, part.max_score)}", "bold"),
        ("   not implemented yet", "yellow"),
    )


def start_here_panel(round_id: str, part: PartResult) -> Panel:
    file = f"exercises/{get_round(round_id).part(part.id).file}"
    return Panel(
        Text.assemble(f"{file} is still a stub. Read its docstring, fill it in, then run ",
                      (f"grader check {part.id}", "bold"), ". Stuck? ",
                      (f"grader hint {part.id}", "bold"), " gives a nudge."),
        title=Text.assemble(("start here", "bold yellow"), f"  {part.id} · {part.title}"),
        title_align="left", border_style="yellow",
    )


def render_scorecard(console: Console, result: RunResult) -> None:
    """The full scorecard: first failure up front, then one table per part, then the score.
    A part that is still an untouched stub takes one line, not a table of identical rows."""
    console.print(Text.assemble(("grader", "bold"), f" · {result.round} · {result.flavor} "
                                f"flavor · seed {result.seed} · hidden checks"))
    failure = result.first_failure()
    stub_part = next((p for p in result.parts if failure in p.checks and untouched(p)), None)
    if stub_part:
        console.print(start_here_panel(result.round, stub_part))
    elif failure:
        console.print(first_failure_panel(failure))
    for part in result.parts:
        if untouched(part):
            console.print(untouched_line(part))
            continue
        console.print(part_table(part))
        for check in part.checks:
            if check is not failure and _worth_a_panel(check):
                console.print(Panel(check_details(check), title=escape(check.id),
                                    title_align="left", border_style="dim"))
    console.print(summary_line(result))
    console.print(Text(HONESTY_NOTE, style="dim"))


def render_json(result: RunResult, mock: dict[str, Any] | None = None) -> str:
    """The documented JSON; during a mock round it gains the round's clock under "mock"."""
    data = result.to_dict()
    if mock is not None:
        data["mock"] = mock
    return json.dumps(data, indent=2)


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
            shown = Text(f"{_points(float(record['score']), float(record['max_score']))} "
                         f"{state}", style="green" if record["full"] else "yellow")
            when = _short_when(str(record["when"]))
        else:
            shown, when = Text("not checked yet", style="dim"), ""
        table.add_row(part.id, part.title, f"{settings.budget_minutes(part):g} min", shown, when)
    console.print(table)


def render_hint(console: Console, part: Part, level: int) -> None:
    """Hints 1..level of a part, the newest highlighted."""
    for index in range(level):
        newest = index == level - 1
        console.print(Panel(Text(part.hints[index], style="bold" if newest else "dim"),
                            title=f"{part.id} hint {index + 1}/{len(part.hints)}: "
                                  f"{part.hint_name(index)}",
                            title_align="left", border_style="cyan" if newest else "dim"))
    if level >= len(part.hints):
        console.print(Text("That was the last hint for this part.", style="dim"))
    else:
        console.print(Text(f"Run `grader hint {part.id}` again for the next one.", style="dim"))
