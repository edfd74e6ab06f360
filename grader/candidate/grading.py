"""One grading pass, as `grader check` and `grader watch` both run it.

Grade on a warm worker, remember the results, record the attempt in a running mock round, and
run the interviewer's follow-up demonstrations for parts that just passed for the first time,
on the same worker. Then, separately, conduct those follow-ups: put each question (through the
renderer, which shows the evidence, asks and shows the model answer) and record. Keeping the
two apart lets `--json` record follow-ups without a word on the terminal.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from grader.candidate import mock
from grader.checks.followups import FollowUp, followup_for, question
from grader.engine import state
from grader.engine.results import ClockDoc, RunResult
from grader.engine.workspace import Workspace

if TYPE_CHECKING:
    from grader.runner import OnCheck, Request, Worker

Clock = Callable[[], float]
Ask = Callable[[], str | None]


@dataclass(frozen=True)
class GradingPass:
    """A grading pass: the results, what the round recorded, the follow-ups now due."""

    result: RunResult
    recorded: mock.Recorded | None = None
    evidence: dict[str, dict[str, Any]] = field(default_factory=dict)
    warning: str | None = None

    def mock_json(self) -> ClockDoc | None:
        """The "mock" key of `grader check --json`: absent (None) outside a round."""
        return self.recorded.clock.to_json() if self.recorded else None


def grade(workspace: Workspace, request: Request, worker: Worker, now: Clock,
          on_check: OnCheck | None = None) -> GradingPass:
    """Grade, record, and gather the evidence of the follow-ups this pass made due."""
    result = worker.run(request, on_check)
    # What is kept of a check is a convenience: a damaged round, a full disk or a read-only
    # workspace must not stop anyone from seeing their scorecard.
    try:
        state.record_results(workspace, result)
    except OSError as exc:
        return GradingPass(result, warning=f"the scores were not saved for `grader list`: "
                                           f"{_said(exc)}")
    try:
        recorded = mock.record_check(workspace, result, now())
    except (mock.MockError, OSError) as exc:
        return GradingPass(result, warning=f"not recorded in the mock round: {_said(exc)}")
    if recorded is None:
        return GradingPass(result)
    due = [p for p in recorded.first_passes
           if followup_for(workspace.round, p, workspace.flavor)]
    evidence = worker.follow_up(replace(request, parts=due)) if due else {}
    return GradingPass(result, recorded, evidence)


def _said(exc: Exception) -> str:
    """An error in a line: an OSError's reason and the file it is about."""
    if isinstance(exc, OSError) and exc.strerror:
        return f"{exc.strerror} ({exc.filename})"
    return str(exc)


Converse = Callable[[str, FollowUp, dict[str, Any], str], str | None]
"""Shows one due follow-up (part, follow-up, evidence, question) and returns the answer given,
if any: the renderer's side of a follow-up (grader.render.views.converse)."""


def conduct_followups(workspace: Workspace, graded: GradingPass, now: Clock,
                      converse: Converse | None) -> None:
    """Put each due follow-up's question (to `converse`, where there is one to show it) and
    record question and answer in the round."""
    for part, evidence in graded.evidence.items():
        followup = followup_for(workspace.round, part, workspace.flavor)
        if followup is None:
            continue
        asked = question(followup, evidence)
        answer = converse(part, followup, evidence, asked) if converse else None
        mock.record_followup(workspace, part, asked, answer, evidence, now())
