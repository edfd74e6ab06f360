"""Rendering for the rehearsal commands: the mock round's clock and report (rich and markdown),
the follow-up questions, `grader solution` and `grader explain`. No logic lives here: every
number comes from grader.candidate.mock, every word of a follow-up from grader.checks.followups.

Renderers take the Console to print on, so tests render into a StringIO and compare text.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from datetime import datetime
from pathlib import Path
from typing import Any

from rich.console import Console, Group, RenderableType
from rich.live import Live
from rich.panel import Panel
from rich.syntax import Syntax
from rich.table import Table
from rich.text import Text

from grader.candidate import grading, mock
from grader.checks.followups import FollowUp, followup_for, model_answer
from grader.engine.prose import Block, Document
from grader.engine.results import points_of, points_text
from grader.engine.rounds import Part, Round, get_round
from grader.engine.safe_text import clean
from grader.engine.workspace import Workspace
from grader.render.tables import folding

BUDGET_STYLE = {"within": "green", "close": "yellow", "over": "bold red"}


def fmt_clock(seconds: float) -> str:
    """mm:ss in whole seconds, rounded down; minutes go past 60 (a round is "75:00")."""
    minutes, secs = divmod(max(0, math.floor(seconds)), 60)
    return f"{minutes:02d}:{secs:02d}"


def clock_line(round_: mock.MockRound, now: float) -> Text:
    """The round's clock in one line: elapsed and left, or how far into overtime."""
    clock = mock.clock(round_, now)
    if not round_.running:
        over = (f", overtime +{fmt_clock(clock.elapsed_s - clock.limit_s)}" if clock.overtime
                else "")
        return Text(f"mock round ended after {fmt_clock(clock.elapsed_s)} "
                    f"({fmt_clock(clock.limit_s)} round{over})", style="bold")
    if clock.overtime:
        return Text.assemble(("mock round · ", "bold"),
                             (f"OVERTIME +{fmt_clock(clock.elapsed_s - clock.limit_s)}",
                              "bold red"),
                             f" ({fmt_clock(clock.limit_s)} round): checks still run and are "
                             "marked overtime")
    return Text.assemble(("mock round · ", "bold"), f"{fmt_clock(clock.elapsed_s)} elapsed · ",
                         (f"{fmt_clock(clock.remaining_s)} left", "bold"))


def _state_text(row: mock.PartProgress) -> Text:
    if row.passed_at_s is not None:
        return Text(f"✓ passed {fmt_clock(row.passed_at_s)}", style="green")
    return Text("working" if row.reached else "not reached", style="" if row.reached else "dim")


def _time_text(row: mock.PartProgress) -> Text:
    spent = fmt_clock(row.spent_s) if row.reached else "–"
    text = Text(f"{spent} of {fmt_clock(row.budget_s)}")
    if row.reached:
        text.append(f" {row.budget_state}", style=BUDGET_STYLE[row.budget_state])
    return text


def round_table(round_: mock.MockRound, now: float) -> Table:
    """One row per part: state, time on it against its budget, attempts, hints, score."""
    table = Table(show_edge=False, title=clock_line(round_, now), title_justify="left")
    table.add_column("part", no_wrap=True)
    table.add_column("state", no_wrap=True)
    table.add_column("time on part", no_wrap=True)
    for name in ("attempts", "hints", "score"):
        table.add_column(name, justify="right", no_wrap=True)
    for row in mock.progress(round_, now):
        table.add_row(row.id, _state_text(row), _time_text(row), str(row.attempts),
                      str(row.hints), points_of(row.score, row.max_score))
    return folding(table)


def render_round(console: Console, round_: mock.MockRound, now: float) -> None:
    console.print(round_table(round_, now))


def countdown(console: Console, load: Callable[[], mock.MockRound | None], now: Callable[[], float],
              sleep: Callable[[float], None], max_ticks: int | None = None) -> None:
    """`grader mock status --watch`: redraw the round every second until it ends (the state
    is re-read each time, so checks and hints from another terminal show up)."""
    ticks = 0
    with Live(console=console, auto_refresh=False) as live:
        while True:
            round_ = load()
            if round_ is None:
                live.update(Text("The round has ended: `grader mock end` shows the report."),
                            refresh=True)
                return
            live.update(round_table(round_, now()), refresh=True)
            ticks += 1
            if max_ticks is not None and ticks >= max_ticks:
                return
            sleep(1.0)


def render_round_started(console: Console, round_: mock.MockRound) -> None:
    ends = datetime.fromtimestamp(round_.started_at + round_.limit_s).strftime("%H:%M")
    budgets = ", ".join(f"{p} {fmt_clock(round_.budgets_s[p])}" for p in round_.parts)
    console.print(Text.assemble(("Mock round started: ", "bold"),
                                f"{fmt_clock(round_.limit_s)} (until {ends}). Budgets: {budgets}."))
    console.print("Every `grader check` (and `grader watch`) now records an attempt; "
                  "`grader mock status` shows the clock, `grader mock end` the report.")


def render_no_round(console: Console, last: mock.MockRound | None) -> None:
    console.print("No mock round is running; start one with `grader mock start`.")
    if last is not None:
        console.print(Text(f"The last round ({last.id}) is kept in .grader/mock/{last.id}/.",
                           style="dim"))


def render_report(console: Console, ended: mock.Ended) -> None:
    """`grader mock end`: the parts table, the score, the follow-ups, where it was saved."""
    report = ended.report
    if ended.already:
        console.print(Text("That round had already ended; here is its report again.",
                           style="dim"))
    console.print(round_table(report.round, report.round.ended_at or 0.0))
    console.print(Text.assemble(("Score ", "bold"), points_of(report.score, report.max_score),
                                f"  ·  at the {fmt_clock(report.round.limit_s)} mark: "
                                f"{points_text(report.score_at_limit)}"))
    for followup in report.round.followups:
        said = "skipped" if followup.skipped else "answered"
        console.print(Text(f"follow-up {followup.part}: {said}", style="dim"))
    console.print(f"Saved: {ended.markdown_path} and {ended.json_path}", markup=False)


# --- the report as markdown --------------------------------------------------------------------


def _timeline(round_: mock.MockRound) -> list[tuple[float, str]]:
    seen: set[str] = set()
    events: list[tuple[float, str]] = []
    for a in round_.attempts:
        note = ""
        if a.full and a.part not in seen:
            seen.add(a.part)
            note = " — first full pass"
        events.append((a.at_s, f"{a.part} check: {points_of(a.score, a.max_score)}{note}"
                               f"{' — overtime' if a.overtime else ''} (`{a.snapshot}`)"))
    events += [(h.at_s, f"hint {h.part} (level {h.level})") for h in round_.hints]
    events += [(s.at_s, f"solution {s.part}" + (" (forced, counted as a hint)" if s.forced
                                                else " (after passing)"))
               for s in round_.solutions]
    events += [(f.at_s, f"follow-up {f.part} " + ("skipped" if f.skipped else "answered"))
               for f in round_.followups]
    return sorted(events, key=lambda e: e[0])


def report_markdown(report: mock.Report) -> str:
    """The report saved as report.md: the documented numbers, then the timeline and answers."""
    round_ = report.round
    round_def = get_round(round_.round_id)
    started = datetime.fromtimestamp(round_.started_at).strftime("%Y-%m-%d %H:%M")
    over = (f" (overtime: {fmt_clock(report.elapsed_s - round_.limit_s)} past the limit)"
            if report.overtime else " (within time)")
    lines = [
        "# Mock interview report", "",
        f"- Round: {round_def.id} ({round_def.title}), session {round_.id}, started "
        f"{started}, {round_.minutes:g} minutes, {round_.flavor} flavor",
        f"- Elapsed: {fmt_clock(report.elapsed_s)}{over}",
        f"- Score: {points_text(report.score)} / {points_text(report.max_score)} (at the time "
        f"limit: {points_text(report.score_at_limit)})", "",
        "| part | passed at | time on part | budget | over budget | attempts | hints | score |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for p in report.parts:
        passed = "never" if p.passed_at_s is None else fmt_clock(p.passed_at_s)
        if p.passed_at_s is not None and p.passed_at_s > round_.limit_s:
            passed += " (overtime)"
        to_pass = f" ({p.attempts_to_pass} to pass)" if p.attempts_to_pass else ""
        spent = fmt_clock(p.spent_s) if p.reached else "not reached"
        lines.append(f"| {p.id} {round_def.part(p.id).title} | {passed} | {spent} | "
                     f"{fmt_clock(p.budget_s)} | {'yes' if p.over_budget else 'no'} | "
                     f"{p.attempts}{to_pass} | {p.hints} | {points_of(p.score, p.max_score)} |")
    lines += ["", "A part's time runs from the previous part's first pass (the start, for the "
              "first part) to its own first full pass.", "", "## Timeline", ""]
    lines += [f"- {fmt_clock(at)} {text}" for at, text in _timeline(round_)] or ["- (nothing)"]
    lines += ["", "## Follow-up questions", ""]
    if not round_.followups:
        lines.append("None were asked (they come when a part first passes during the round).")
    for f in round_.followups:
        lines += [f"### {f.part}", "", f"**Question.** {f.question}", ""]
        for run in f.evidence.get("shown", []):
            raised = run["raised"]
            lines += [f"{run['title']}:", "", "```", run["snippet"],
                      f"{raised['type']}: {raised['message']}", "```", ""]
            if run.get("line"):
                lines += [f"at `{run['line']}`", ""]
        if f.skipped:
            lines += ["**Your answer.** _(skipped)_", ""]
        else:
            lines += ["**Your answer.**", ""] + [f"> {line}" for line in f.answer.splitlines()]
            lines.append("")
        followup = followup_for(round_def, f.part, round_.flavor)
        if followup is not None:
            lines += ["**A model answer.**", "", model_answer(followup, f.evidence), ""]
    return "\n".join(lines) + "\n"


# --- follow-ups on the terminal ----------------------------------------------------------------


def render_followup(console: Console, part: str, evidence: dict[str, Any],
                    question: str) -> None:
    """The interviewer's demonstration (the real error and the line), then the question. The
    error and the line are the candidate's code's, so they are cleaned
    (grader/engine/safe_text.py)."""
    console.rule(f"[bold]Interviewer's follow-up · {part}")
    if evidence.get("note"):
        console.print(Text(evidence["note"], style="dim"))
    for run in evidence.get("shown", []):
        raised = run["raised"]
        body: list[RenderableType] = [
            Syntax(run["snippet"], "python", theme="ansi_dark", word_wrap=True),
            Text.assemble((f"{clean(raised['type'])}: ", "bold red"),
                          (clean(raised["message"]), "red")),
        ]
        if run.get("line"):
            body.append(Text.assemble(("the line: ", "bold"), clean(run["line"])))
        console.print(Panel(Group(*body), title=run["title"], title_align="left",
                            border_style="red"))
    if evidence.get("status") == "unavailable":
        console.print(Text(f"(no live demonstration: {evidence['why']})", style="dim"))
    console.print(Panel(Text(question), title="Question", title_align="left",
                        border_style="cyan"))


def ask_in_terminal(console: Console) -> str | None:
    """Read an answer of one or more lines; an empty line ends it, and an empty answer,
    end of input or Ctrl-C skips the question."""
    console.print(Text("Your answer (finish with an empty line; an empty answer skips):",
                       style="bold"))
    lines: list[str] = []
    try:
        while True:
            line = console.input("> ")
            if not line.strip():
                break
            lines.append(line)
    except (EOFError, KeyboardInterrupt):
        console.print()
    answer = "\n".join(lines).strip()
    return answer or None


def render_model_answer(console: Console, followup: FollowUp, evidence: dict[str, Any],
                        answered: bool) -> None:
    console.print(Panel(Text(model_answer(followup, evidence)),
                        title="A model answer" + ("" if answered else " (question skipped)"),
                        title_align="left", border_style="green"))
    more = " · ".join(f"grader explain {t}" for t in followup.topics)
    console.print(Text(f"More: {more}", style="dim"))


# --- rounds, solutions and explanations --------------------------------------------------------


def render_rounds(console: Console, rounds: Iterable[Round]) -> None:
    """`grader rounds`: one row per installed round."""
    table = Table(title="Installed rounds (grader init --round ID DIR)", title_justify="left")
    for column in ("round", "title", "parts", "minutes", "flavors"):
        table.add_column(column, no_wrap=column in ("round", "minutes"))
    for round_ in rounds:
        table.add_row(Text(round_.id, style="bold"), Text(round_.title),
                      str(len(round_.parts)), f"{round_.minutes:g}", ", ".join(round_.flavors))
    console.print(folding(table))


def render_solution(console: Console, part: Part, path: Path, forced: bool) -> None:
    console.print(Panel(Syntax(path.read_text(), "python", line_numbers=True,
                               theme="ansi_dark", word_wrap=True),
                        title=f"{part.id} · {part.title} · reference solution",
                        title_align="left"))
    if forced:
        console.print(Text("Shown with --force before you passed (a mock round counts it as a "
                           "hint).", style="dim"))


def render_topic_list(console: Console, round_: Round, topics: Iterable[Document]) -> None:
    table = Table(title=f"grader explain TOPIC · {round_.id}", title_justify="left",
                  show_edge=False)
    table.add_column("topic", no_wrap=True, style="bold")
    table.add_column("what it explains")
    for topic in topics:
        table.add_row(topic.name, Text(topic.meta.get("summary", "")))
    console.print(folding(table))


def render_topic(console: Console, topic: Document,
                 demos: list[tuple[Block, str]] | None) -> None:
    """A topic's prose, section by section, then each live demonstration: the code and what it
    printed (only the code with --no-demo)."""
    body: list[RenderableType] = [Text(topic.meta.get("summary", ""), style="bold")]
    for name, blocks in topic.sections.items():
        prose = [b.text for b in blocks if not b.code]
        if prose:
            body += [Text(""), Text(name, style="bold cyan"), Text("\n\n".join(prose))]
    console.print(Panel(Group(*body), title=topic.name, title_align="left",
                        border_style="cyan"))
    code = [b for blocks in topic.sections.values() for b in blocks if b.code]
    printed = dict((id(block), output) for block, output in demos or [])
    for index, block in enumerate(code, 1):
        console.print(Text(f"live demo {index}", style="bold cyan"))
        console.print(Syntax(block.text, "python", theme="ansi_dark", word_wrap=True))
        if demos is not None:
            shown = printed.get(id(block), "").rstrip() or "(no output)"
            console.print(Text("\n".join(f"» {line}" for line in shown.splitlines()),
                               style="dim"))


def present(console: Console, workspace: Workspace, graded: grading.GradingPass,
            now: grading.Clock, ask: grading.Ask | None) -> None:
    """The scorecard, the round's clock and budgets when a round runs, then the follow-ups."""
    from grader.render import report

    report.render_scorecard(console, graded.result)
    if graded.warning:
        console.print(graded.warning, style="yellow", markup=False)
    if graded.recorded is not None:
        render_round(console, graded.recorded.round, now())
    grading.conduct_followups(workspace, graded, now, converse(console, ask))


def converse(console: Console, ask: grading.Ask | None) -> grading.Converse:
    """A follow-up on the terminal: the interviewer's demonstration and question, the answer
    asked for (where there is a terminal to ask on), then the model answer."""
    def conversation(part: str, followup: FollowUp, evidence: dict[str, Any],
                     asked: str) -> str | None:
        render_followup(console, part, evidence, asked)
        answer = ask() if ask else None
        render_model_answer(console, followup, evidence, answered=answer is not None)
        return answer

    return conversation
