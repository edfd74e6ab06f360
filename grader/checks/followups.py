"""The interviewer's follow-up questions, each backed by a live demonstration on the candidate's
own code. A follow-up is a round's `followups/<part>.md`:

    ---
    probe: followup_part3          # probes.py: the demonstration, run beside candidate code
    baseline: followup_textbook    # optional probes.py: the same on code that is not theirs
    args: followup_part3_args      # optional checks.py: the probe's arguments (plain data)
    interpret: interpret_part3     # optional checks.py: the observation -> evidence
    topics: backward-derivation, gradcheck
    flavors: torch                 # optional: default every flavor of the part
    ---
    ## question
    Why does dW[j] collect gradient from every later prefix ...?

    ## answer
    W[j] is a factor of every prefix from P[j] on ...

    Live, on your code: the norms of your dW are {norms}.   <- kept only when measured

The halves run in three places: the probe in a child that imported the candidate's part; the
interpretation in the worker, where no candidate code ran (comparisons against the truth happen
there), giving JSON-able *evidence*; the question and model answer here, in the CLI. Evidence
may choose the question section (`question`, or a list of sections to join) and the answer's
pieces (`answer`: section names, or `topic:<name>` for a topic's explanation), fill
placeholders (`values`), and list what the interviewer ran (`shown`). Nothing here imports
torch or numpy.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from types import ModuleType
from typing import TYPE_CHECKING, Any, cast

from grader.engine.prose import Document, fill, followups, topics
from grader.engine.rounds import Round, RoundError

if TYPE_CHECKING:
    from grader.checks.base import Plan

Evidence = dict[str, Any]
QUESTION = "question"
ANSWER = "answer"


@dataclass(frozen=True)
class FollowUp:
    """One part's follow-up: the demonstration's names and the words around it."""

    round: Round
    part: str
    doc: Document

    @property
    def topics(self) -> tuple[str, ...]:
        return self.doc.listed("topics")

    @property
    def flavors(self) -> tuple[str, ...]:
        return self.doc.listed("flavors") or self.round.part(self.part).flavors


def followup_for(round_: Round, part_id: str, flavor: str) -> FollowUp | None:
    """The part's follow-up in this flavor, if it has one."""
    doc = followups(round_).get(part_id)
    if doc is None:
        return None
    followup = FollowUp(round_, part_id, doc)
    return followup if flavor in followup.flavors else None


def _not_graded(data: Any) -> Any:
    from grader.checks.base import skipped

    return skipped("a follow-up demonstration is not graded")


def plan_followup(followup: FollowUp, judge: ModuleType,
                  seed: int) -> tuple[Plan, Callable[[dict[str, Any]], Evidence]]:
    """(the demonstration as a plan for the runner, how to read its frame into evidence)."""
    from grader.checks.base import Plan

    meta = followup.doc.meta

    def named(key: str) -> Callable[..., Any] | None:
        if key not in meta:
            return None
        fn = getattr(judge, meta[key], None)
        if not callable(fn):
            raise RoundError(f"{followup.doc.source}: {key} = {meta[key]}: checks.py has no "
                             "such function")
        return cast(Callable[..., Any], fn)

    make_args, interpret = named("args"), named("interpret")
    args: dict[str, Any] = make_args(seed) if make_args else {}
    baseline = ("round:" + meta["baseline"], args) if "baseline" in meta else None
    plan = Plan("round:" + meta["probe"], args, _not_graded, baseline=baseline)

    def evidence(frame: dict[str, Any]) -> Evidence:
        if frame.get("kind") != "observation":
            return unavailable(str(frame.get("message", "no result")))
        data = frame["data"]
        if interpret is not None:
            return cast(Evidence, interpret(data))
        if isinstance(data, dict) and data.get("raised"):
            return unavailable(data["raised"]["message"])
        return {"status": "measured", "values": data}

    return plan, evidence


def unavailable(why: str) -> Evidence:
    """Evidence of a demonstration that could not run (the child failed, the code raised)."""
    return {"status": "unavailable", "why": why}


def question(followup: FollowUp, evidence: Evidence) -> str:
    """The question section the evidence chose, or its sections joined, in order (where the
    question states a fact of the demonstration, such as where the error was raised)."""
    chosen = evidence.get("question", QUESTION)
    names = [chosen] if isinstance(chosen, str) else chosen
    return " ".join(followup.doc.text(name) for name in names)


def _piece(followup: FollowUp, name: str) -> str:
    if name.startswith("topic:"):
        return topics(followup.round)[name.removeprefix("topic:")].text("explanation")
    return followup.doc.text(name)


def model_answer(followup: FollowUp, evidence: Evidence) -> str:
    """The answer's pieces, each paragraph with its placeholders filled from the evidence; a
    paragraph whose measurement is missing (no demonstration ran) is left out."""
    values = evidence.get("values", {})
    paragraphs = []
    for name in evidence.get("answer", [ANSWER]):
        for paragraph in _piece(followup, name).split("\n\n"):
            filled = fill(paragraph, values)
            if filled:
                paragraphs.append(filled)
    return "\n\n".join(paragraphs)
