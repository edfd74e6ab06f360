"""The warm worker: imports torch and numpy once, then grades requests read from stdin.

For each part of a request it builds the checks' plans (the judge's half), runs any baseline
probes in children that never import candidate code, forks a child (runner.child) that imports
the candidate's file and runs the probes, and judges each observation here, where no candidate
code has run. A child that hangs is killed at the per-check timeout and the part's remaining
checks are reported as not run; a child that dies mid-check costs that check only (a fresh child
picks up from the next one). Events go to stdout as JSON lines.

Started as `python -P -m grader.runner.start` (see there).
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import pickle
import re
import tempfile
import time
import traceback
from collections import OrderedDict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any, TextIO

from grader.checks import apart
from grader.checks.base import (
    Check,
    Context,
    Diagnosis,
    Plan,
    Recheck,
    Repair,
    Verdict,
    skipped,
)
from grader.checks.kinds import sentences
from grader.checks.mutants import source_text
from grader.checks.table import checks_for
from grader.engine.flavored import for_flavor
from grader.engine.results import (
    FILES_FULL,
    NOT_SET_UP,
    TOO_BUSY,
    CheckResult,
    PartResult,
    Status,
    scale_to_weight,
    weigh_properties,
)
from grader.engine.rounds import Part, Round, RoundError, get_round, load_module
from grader.engine.triage import folded_under, follows_from, root_of
from grader.engine.workspace import EXERCISES_DIR
from grader.runner import strays
from grader.runner.children import (
    BACKSTOP,
    Child,
    Children,
    ChildrenLost,
    Ended,
    IdleBudget,
    Spawn,
    files_most,
    fork_spawner,
    next_frame,
    ready_to_fork,
    wait_readable,
)
from grader.runner.protocol import (
    ChildJob,
    Event,
    FrameTimeout,
    ProbeCall,
    Request,
    probe_frame,
)

Emit = Callable[[Event], None]
DEVICE_SETUP_S = 30.0  # allowed on top of the timeout to a probe that sets up CUDA
ADVISORY = ("\n(advice only when graded: this was observed inside the process that ran your "
            "code, so it is worth no points here)")
ANSWERS = ("observation", "not_implemented", "fault")
"""The frames that answer one check, and say which (their index)."""
PART_IDLE_CHECKS = 2.0
"""How long, in per-check timeouts, a part's children may sleep in all (sleeping, waiting on
nothing the grader gives them): code that idles a little before each answer is cut off once
the sum runs out, whatever each check's own wait. Honest code computes and never sleeps."""
FILES_WORDS = (f"held more than {strays.files_held_most():,} open files while the machine's "
               f"table of them was crowded (every other program's, and every classmate's, "
               f"files come from that table), and was stopped")
HIDDEN_WORDS = ("kept the files it holds out of the grader's sight (a process made undumpable, "
                "or started from a file it may not read, whose /proc the grader may not read) "
                "while the machine's table of open files was crowded, and was stopped")
BACKSTOP_WORDS = {
    "cpu": "did not finish within {limit:g} s of CPU time (an infinite loop, or far more work "
           "than needed?)",
    "idle": "sat idle for {limit:g} s (sleeping or waiting, not computing)",
    "wall": "got too little CPU to finish within {backstop:g} s on the clock",
    "clock": "did not finish within {limit:g} s on the clock",
    "files": FILES_WORDS,
    "hidden": HIDDEN_WORDS,
}


IMPORT_WORDS = {
    "cpu": "importing {file} did not finish within {limit:g} s of CPU time (a loop or a long "
           "computation at module level?)",
    "idle": "importing {file} sat idle for {limit:g} s (sleeping or waiting at module level?)",
    "wall": "importing {file} got too little CPU to finish within {backstop:g} s on the clock",
    "clock": "importing {file} did not finish within {limit:g} s on the clock",
    "files": f"importing {{file}} {FILES_WORDS}",
    "hidden": f"importing {{file}} {HIDDEN_WORDS}",
}
STARVED = TOO_BUSY.format(what="this")
"""What a check says when its child was starved: it neither used its CPU time nor sat idle
past its limits, yet the clock's backstop ran out (a machine this busy judges nothing)."""


def starved_frame(words: str, machine: str = STARVED) -> dict[str, Any]:
    """The frame of a child with no candidate code (a baseline, a reference's timed run, a
    diagnosis) that the machine stopped (`machine` says how: only the clock's backstop stopped
    it, or the kernel ended it for the machine's memory): what it had to give is unknown, so
    what it serves is undecided (see starved), never judged without it."""
    return {**probe_frame("error", message=f"{machine}\n{words}"), "starved": True}


NOT_NAMED = f"({TOO_BUSY.format(what='which slip this is')})"
"""Added to a failed check's hint when the diagnosis that would have named the mistake was
starved: the failure stands, the name is what a quieter run would add."""


def starved(frame: dict[str, Any] | None) -> bool:
    return bool(frame and frame.get("starved"))


def timeout_words(exc: FrameTimeout, limit: float, budget: IdleBudget | None,
                  importing: str = "") -> str:
    """Why a wait ended without a frame (while `importing` a file, if named), in the
    scorecard's words."""
    if exc.why == "idle" and budget is not None and budget.left_s <= 0:
        return (f"this part's children sat idle for {PART_IDLE_CHECKS:g} check timeouts in all "
                "(sleeping or waiting, not computing)")
    words = IMPORT_WORDS if importing else BACKSTOP_WORDS
    return words[exc.why].format(limit=limit, backstop=BACKSTOP * limit, file=importing)


def cuda_in_reach() -> bool:
    """Whether a forked child will find CUDA. torch asks NVML here (the worker runs with
    PYTORCH_NVML_BASED_CUDA_CHECK=1), so the worker never initialises CUDA itself and its
    forked children still can."""
    import torch

    return bool(torch.cuda.is_available())


def device_ready(request: Request, plans: list[Plan]) -> bool:
    """A plan of this part will use CUDA: it wants the device, and the request allows it."""
    return (any(p.uses_device for p in plans) and request.flavor == "torch"
            and request.device != "cpu" and cuda_in_reach())


DEVICE_LOCK = Path(tempfile.gettempdir()) / f"grader-device-{os.getuid()}.lock"


@contextmanager
def device_turn(needed: bool) -> Iterator[None]:
    """One grading process at a time on the GPU (`grade --jobs`, or two terminals): a scan timed
    while another submission runs kernels on the same device would be judged in a crowd its
    reference timing never saw. The children are forked only once the turn is held, so waiting
    for it never eats into a check's timeout. A POSIX record lock belongs to this process alone:
    a forked child never holds it, however long it outlives the turn. Without a lock file,
    grading goes on unlocked."""
    if not needed:
        yield
        return
    try:
        fd = os.open(DEVICE_LOCK, os.O_RDWR | os.O_CREAT, 0o600)
    except OSError:
        yield
        return
    try:
        fcntl.lockf(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def frame_timeout(request: Request, plan: Plan, ready: bool) -> float:
    """How long one probe may take: the request's timeout, plus time to set up CUDA for a probe
    that uses the device when there is one (context creation alone can take seconds)."""
    return request.timeout_s + (DEVICE_SETUP_S if plan.uses_device and ready else 0.0)


class _Part:
    """One part being graded: its checks, their contexts and plans, and the results so far.
    `spawn` starts the children that run the candidate's code (forked here, or in a sandbox);
    baselines, which run none, are always forked here."""

    def __init__(self, request: Request, round_: Round, part: Part, checks: list[Check],
                 contexts: list[Context], plans: list[Plan], spawn: Spawn,
                 alive: Callable[[], None] = lambda: None) -> None:
        self.request, self.round, self.part = request, round_, part
        self.checks, self.contexts, self.plans = checks, contexts, plans
        self.spawn, self.alive = spawn, alive
        self.ready = device_ready(request, plans)
        self.results: list[CheckResult] = []
        self.voiding: dict[str, Verdict | None] = {}
        self.kept: dict[str, list[tuple[str, Any]]] = {}
        """What each call of a check that a plan borrows (Plan.borrows) kept, by the check's
        id: its cases' labels, each with the call's "kept"."""
        self.borrowing: dict[int, dict[str, Any]] = {}
        """The frames of the plans that borrow another check's calls, by index, judged again
        once every check has run (judge_borrowed_calls)."""
        self.unless_values: dict[str, Verdict] = {}
        """The failures that stand only where the part's values pass (Verdict.by_values),
        each the failing verdict (its `otherwise` stands instead)."""
        self.cut_short: set[str] = set()
        """The checks not run because the code under test hung in an earlier one."""
        self.advised = 0.0
        """The points of the checks that only advise here (graded, observed inside)."""
        self.repairs: list[tuple[str, Repair, str | None, bool]] = []
        """Failures whose mistake no look has named yet (or named weakly), to be named by a
        Repair once the part's children are done (a child beside them would end theirs),
        each with the hint to keep beside the repair's name, and whether the verdict's hint
        names a known mistake already (Diagnosis.keep_hint)."""
        self.idle = self.idle_budget()

    def idle_budget(self) -> IdleBudget:
        """The part's allowance of sleep; setting a GPU up waits on the driver, and that sleep
        is the device's, not the code's."""
        return IdleBudget(PART_IDLE_CHECKS * self.request.timeout_s
                          + (DEVICE_SETUP_S if self.ready else 0.0))

    @classmethod
    def planned(cls, request: Request, round_: Round, part: Part, earlier: list[PartResult],
                spawn: Spawn, alive: Callable[[], None]) -> _Part:
        """The part's checks from the round's table, each planned in its own context."""
        checks = checks_for(round_, part.id, request.flavor)
        cuda = request.flavor == "torch" and request.device != "cpu" and any(
            c.needs == "cuda" for c in checks) and cuda_in_reach()
        contexts = [Context(request.seed, request.flavor, c.id, request.device,
                            request.timeout_s, cuda, tuple(p.id for p in earlier),
                            tuple(p.id for p in earlier if p.passed),
                            hidden_seed=request.hidden_seed, workspace=request.root)
                    for c in checks]
        plans = [_planned(request, c, ctx) for c, ctx in zip(checks, contexts, strict=True)]
        return cls(request, round_, part, checks, contexts, plans, spawn, alive)

    def job(self, first: int, stop: int, run: dict[str, Any] | None = None) -> ChildJob:
        """The job of a child running plans[first:stop] against the candidate's part (with
        one run's arguments, for a plan measured run by run)."""
        plans = self.plans[first:stop]
        return _job(self.request, self.round, str(self.request.root), self.part.module,
                    [_plan_call(p) for p in plans],
                    [{**p.args, **(run or {})} for p in plans], first, self.ready)

    def baseline_job(self, index: int, run: dict[str, Any] | None = None) -> ChildJob:
        """The job of a child running plan `index`'s baseline, with no candidate code."""
        plan = self.plans[index]
        probe, args = plan.baseline  # type: ignore[misc]
        return self.reference_job(index, [(probe, {**args, **(run or {})}, plan.uses_device)])

    def reference_job(self, first: int,
                      probes: list[tuple[str, dict[str, Any], bool]]) -> ChildJob:
        """The job of a child running probes (name, arguments, whether it uses the device)
        with no candidate code (baselines, a diagnosis), the first for plan `first`."""
        return _job(self.request, self.round, str(self.round.reference_dir("torch")), None,
                    [_call(name, device) for name, _, device in probes],
                    [args for _, args, _ in probes], first, self.ready)

    def folded(self, index: int, verdict: Verdict) -> bool:
        """Whether the failure `verdict` of check `index` follows from a failure already
        judged (a check its row names in `after`, unless the verdict stands alone): the
        scorecard folds it under that one (engine.triage), whose hint names the slip, so
        naming this one's (the reference's mutants run again, on this check's own cases,
        often the larger) would cost seconds that no candidate reads. A failure that stands
        only where the values pass (Verdict.by_values) explains nothing yet."""
        after = () if verdict.alone else self.checks[index].after
        return follows_from(after, {r.id: r.status for r in self.results
                                    if r.id not in self.unless_values}) is not None

    def result(self, index: int, verdict: Verdict, duration: float, output: str,
               status: Status | None = None) -> None:
        check, ctx = self.checks[index], self.contexts[index]
        final: Status = status or verdict.status
        applies = check.applies(ctx) and not (final == "skipped" and verdict.not_applicable)
        advisory = self.request.graded and check.observed == "inside"
        max_score = check.points if applies and not advisory else 0.0
        if applies and advisory:
            self.advised += check.points
        score = max_score * (1.0 if final == "passed" else verdict.fraction
                             if final == "failed" else 0.0)
        message = verdict.message + (ADVISORY if advisory and applies else "")
        if verdict.voids and final == "failed":
            self.voiding[check.id] = verdict.otherwise
        if verdict.by_values and final == "failed" and verdict.otherwise is not None:
            self.unless_values[check.id] = verdict
        hint = verdict.hint and for_flavor(verdict.hint, ctx.flavor)
        self.results.append(CheckResult(
            id=check.id, title=check.title, status=final, score=score, max_score=max_score,
            message=message, hint=hint, duration_s=duration, output=output,
            not_implemented=verdict.stub, after=[] if verdict.alone else list(check.after),
            rank=check.rank))

    def not_run(self, start: int, why: str, status: Status = "skipped",
                output: str = "", by_the_code: bool = False) -> int:
        """Report checks[start:] with one reason (the printed output goes with the first);
        `by_the_code`: the code under test cut the part short (it hung), which void_results
        must know of a voiding check among them."""
        for i in range(start, len(self.checks)):
            self.result(i, Verdict("failed", why), 0.0, output if i == start else "", status)
            if by_the_code:
                self.cut_short.add(self.checks[i].id)
        return len(self.checks)


def _call(probe: str, uses_device: bool) -> ProbeCall:
    """A call of a child that runs no candidate code: nothing in it is refused."""
    return {"probe": probe, "uses_device": uses_device, "forkless": False, "threadless": False,
            "profiled": False}


def _plan_call(plan: Plan) -> ProbeCall:
    """A plan's call in a child running the candidate's code: its process and thread filters
    (Plan.processless, Plan.threadless), and whether its watch profiles a call (forkless)."""
    return {"probe": plan.probe, "uses_device": plan.uses_device,
            "forkless": plan.processless, "threadless": plan.threadless,
            "profiled": plan.forkless}


def _job(request: Request, round_: Round, root: str, module: str | None,
         calls: list[ProbeCall], args: list[dict[str, Any]], first: int,
         ready: bool) -> ChildJob:
    return ChildJob({"round": round_.id, "root": root, "module": module,
                     "flavor": request.flavor, "calls": calls, "first": first,
                     "memory_mb": request.memory_mb, "device_ready": ready}, tuple(args))


NOT_MEASURED = Plan("nothing", {}, lambda data: skipped("not measured: the request asked for "
                                                        "no timed rounds"))
"""The stand-in plan of a measured check when the request asked for none (Request.measured)."""


def _planned(request: Request, check: Check, ctx: Context) -> Plan:
    """The check's plan; a stand-in where it cannot apply here (and its figures were not asked
    for) or where it is measured in timed rounds and the request asked for none. A plan must be
    measured exactly where the check's row says (Check.measured), which is what lets a request
    skip one without making it."""
    if not (request.informational or check.applies(ctx)):
        return _not_run_here(check)
    if check.measured and not request.measured:
        return NOT_MEASURED
    plan = check.plan(ctx)
    if (plan.measured is not None) != check.measured:
        said = "is" if check.measured else "is not"
        raise RoundError(f"{check.id}: its row says it {said} measured in timed rounds, and its "
                         "plan disagrees (a custom row says `measured = true`)")
    return plan


def _not_run_here(check: Check) -> Plan:
    """The stand-in plan of a check that cannot apply on this machine, when its figures were
    not asked for (Request.informational)."""
    why = f"cannot apply here (it needs {check.needs}); not run"
    return Plan("nothing", {}, lambda data: skipped(why, not_applicable=True))


def grade_part(request: Request, round_: Round, part: Part, earlier: list[PartResult],
               spawn: Spawn, alive: Callable[[], None]) -> list[CheckResult]:
    """Grade every check of one part; the results' points add up to the part's weight.
    `alive` is called whenever a child's frame arrives (the CLI's watchdog hears progress)."""
    return run_part(_Part.planned(request, round_, part, earlier, spawn, alive))


def run_part(grading: _Part) -> list[CheckResult]:
    """Run a part's plans: baselines first, then children (a fresh one after each crash, and
    one of its own for each run of a measured plan). The idle allowance is made afresh here,
    for the device readiness the part has now."""
    grading.idle = grading.idle_budget()
    with device_turn(grading.ready):
        index, count = 0, len(grading.checks)
        try:
            baselines = run_baselines(grading)
            while index < count:
                if grading.plans[index].measured:
                    index = _measure(grading, index)
                    continue
                stop = _group_end(grading, index)
                child = grading.spawn(grading.job(index, stop))
                index = _collect(grading, child, index, stop, baselines)
            name_by_repairs(grading)
        except ChildrenLost as lost:
            grading.not_run(len(grading.results), str(lost), status=lost.status)
        judge_borrowed_calls(grading)
        void_results(grading.checks, grading.results, grading.voiding, grading.cut_short)
        explained_by_values(grading)
    drop_hints_to_passed_checks(grading.results)
    point_folded_failures_at_their_root(grading.results)
    show_lines_apart(grading)
    weigh_properties(grading.results)
    hand_on_advice(grading.results, grading.advised)
    part = grading.part
    scale_to_weight(grading.results, (grading.request.weights or {}).get(part.id, part.weight))
    return grading.results


def _group_end(grading: _Part, index: int) -> int:
    """Where the plans that share a child with plans[index] end: before a plan measured run by
    run, and around a plan that sets up the GPU, which runs uncapped in a child of its own."""
    def on_device(i: int) -> bool:
        return grading.ready and grading.plans[i].uses_device

    if on_device(index):
        return index + 1
    return next((i for i in range(index, len(grading.plans))
                 if grading.plans[i].measured or on_device(i)), len(grading.plans))


def hand_on_advice(results: list[CheckResult], advised: float) -> None:
    """The points of the checks that only advise (graded, observed inside) go to the checks of
    the part's values (rank 2), in proportion to theirs, so that every other check keeps the
    share it has in `grader check`: an explanation graded by its words, or a validation, is
    not worth more because something else could not be trusted. Where the part has no such
    check, the points are shared by all (scale_to_weight)."""
    values = [r for r in results if r.rank == 2 and r.max_score > 0]
    total = sum(r.max_score for r in values)
    if not advised or not total:
        return
    factor = (total + advised) / total
    for r in values:
        r.score *= factor
        r.max_score *= factor


def void_results(checks: list[Check], results: list[CheckResult],
                 voiding: dict[str, Verdict | None], cut_short: set[str]) -> None:
    """A check whose failure was evidence against the values (Verdict.voids: autograd inside
    a hand-written backward) takes the points of the checks it voids: their values cannot
    count, whatever they showed. `voiding`: the ids of those failures, each with the verdict
    that stands instead where the first check it voids (the check of the answer it watched)
    did not pass (see Verdict.otherwise).

    A voiding check that saw nothing because the code under test did not let it finish
    (`error`, `timeout`: code that crashes, hangs or kills itself when watched), or that never
    ran because the code hung in a check before it (`cut_short`), voids them too, or the
    values of code that hides how it made them would count; one the machine could not judge
    (`undecided`) holds their points back with its own. A value is voided once, by the first
    check that voids it, whose reason it then shows."""
    by_id = {r.id: r for r in results}
    done: set[str] = set()
    for check in checks:
        targets = [by_id[v] for v in check.voids if v in by_id and v not in done]
        unseen = by_id.get(check.id)
        if check.voids and unseen is not None and (
                unseen.status in ("error", "timeout", "undecided") or check.id in cut_short):
            _not_seen(check, unseen, targets)
            done.update(r.id for r in targets)
        if check.id not in voiding or not check.voids:
            continue
        otherwise = voiding[check.id]
        answer = by_id.get(check.voids[0])
        if otherwise is not None and (answer is None or answer.status != "passed"):
            own = by_id[check.id]
            own.status, own.message, own.hint = otherwise.status, otherwise.message, otherwise.hint
            own.score = own.max_score if otherwise.status == "passed" else 0.0
            continue
        done.update(r.id for r in targets)
        for voided in targets:
            _set_aside(voided, "failed", check.void_message, by_id[check.id])


def explained_by_values(grading: _Part) -> None:
    """Where a check of the part's values (rank 2) did not pass, each failure that stands only
    where they pass (Verdict.by_values: a watched call answered wrong) gives way to what its
    check found of its property: an honest slip answers the watched calls wrong as it does
    the rest, and the values' own checks say so. Unless its Recheck finds that the same call
    made the plain way answers otherwise than the watched one did: code that tells a watched
    call apart, whatever else it fails (a values check failed on purpose hides nothing)."""
    results = grading.results
    if all(r.status == "passed" for r in results if r.rank == 2 and r.max_score > 0):
        return
    for result in results:
        failure = grading.unless_values.get(result.id)
        if failure is None or failure.otherwise is None or result.status != "failed":
            continue
        if failure.recheck is not None and not _answers_alike(grading, result.id,
                                                              failure.recheck):
            result.message += PLAIN_CALL_DIFFERS
            continue
        _restate(grading, result, failure.otherwise)


PLAIN_CALL_DIFFERS = ("; the same call made the plain way, as the checks of the values make "
                      "it, answered otherwise than the watched one, so those checks' failures "
                      "do not explain it")


def _answers_alike(grading: _Part, check_id: str, recheck: Recheck) -> bool:
    """Whether the plain call of `recheck` answers as the watched call did, in a child beside
    the candidate's code with the check's own time; True where the machine starved it or no
    child could be had (what a quieter run would see is unknown: the failure gives way, as
    without a recheck), False where it hung, died, raised or answered otherwise."""
    index = next(i for i, check in enumerate(grading.checks) if check.id == check_id)
    limit = frame_timeout(grading.request, grading.plans[index], grading.ready)
    try:
        frame = _candidate_frame(grading, index, recheck.probe, recheck.args,
                                 IdleBudget(limit), [0.0], limit)
    except ChildrenLost:
        return True
    if starved(frame):
        return True
    if frame is None or frame["kind"] != "observation":
        return False
    try:
        return bool(recheck.alike(frame["data"]))
    except Exception:  # noqa: BLE001 - the observation is candidate code's answer
        return False


def _not_seen(check: Check, unseen: CheckResult, targets: list[CheckResult]) -> None:
    """Void (or, where the machine was to blame, hold back) the values `check` was to vouch
    for, which ended `unseen.status` without seeing how they were made."""
    if unseen.status == "undecided":
        status: Status = "undecided"
        reason = f"held back with {check.id}, which the machine could not judge"
    else:
        how = "was not run (the code hung in a check before it)" \
            if unseen.status == "skipped" else f"ended ({unseen.status})"
        status, reason = "failed", \
            f"not counted: {check.id} {how} before it could see how these values were made"
    for voided in targets:
        _set_aside(voided, status, reason, unseen)


def _set_aside(voided: CheckResult, status: Status, reason: str, by: CheckResult) -> None:
    """A passed or failed check's points taken (or held back) for `reason`, given by check
    `by`, with what it showed on its own kept in its message. It follows from `by`, which no
    longer follows from it (its table's `after` may name it): `by` is the root."""
    if voided.status not in ("passed", "failed"):
        return
    voided.message = f"{reason} (on its own it {voided.status}): see {by.id}"
    voided.status, voided.score, voided.hint, voided.after = status, 0.0, None, [by.id]
    by.after = [a for a in by.after if a != voided.id]


FOLLOWS_HINT = ("Fix {root} first: this failure follows from it (what this check measures "
                "supposes what {root} checks is right).")


def point_folded_failures_at_their_root(results: list[CheckResult]) -> None:
    """A failure folded under another (its row names in `after` a check that failed, and its
    verdict did not stand alone) has its hint open with the check at the root of its chain,
    as the scorecard folds it, unless the hint names that check already: its own (no cache across
    calls, subtract each row's max, clear the gradients) supposes the values right, which the
    failure before it says they are not. The scorecard shows the root's hint alone; the JSON,
    Gradescope's and Classroom's results show every row's."""
    parent = folded_under(results)
    for result in results:
        # The scorecard folds it under the root of its chain.
        root = root_of(result.id, parent) if result.id in parent else None
        if root is not None and root not in (result.hint or ""):
            result.hint = " ".join(filter(None, (FOLLOWS_HINT.format(root=root), result.hint)))


def show_lines_apart(grading: _Part) -> None:
    """The hint of the part's failure a reader meets first gets the lines where the part's
    file differs from the reference's when they are one or two (apart.lines_apart): the
    statement a slip no mutant makes is in them. Met first: the first failing row, and the
    root failure the scorecard opens with (most likely the mistake, engine.triage), once each.
    Not where a file of the workspace that the part's file imports differs from its
    reference: the failure may come from there, and the lines would point away from it. The
    files are read here, never run."""
    failing = [r for r in grading.results if r.status in apart.HINTED and not r.not_implemented]
    if not failing:
        return
    file = grading.part.file
    mine, theirs = (Path(grading.request.root) / EXERCISES_DIR,
                    grading.round.reference_dir(grading.request.flavor))
    source, reference = source_text(mine / file), source_text(theirs / file)
    places = apart.lines_apart(source, reference) if source and reference else ()
    if not places or not all(apart.same_code(source_text(mine / used) or "",
                                             source_text(theirs / used) or "")
                             for used in apart.imported_files(source or "")):
        return
    parent = folded_under(grading.results)
    roots = [r for r in failing if r.id not in parent] or failing
    opening = min(roots, key=lambda r: (-r.rank, -r.max_score))
    for result in {id(r): r for r in (failing[0], opening)}.values():
        result.hint = apart.with_lines_apart(result.hint, file, places)


CHECK_ID = re.compile(r"\bpart\d+\.\w+")


def drop_hints_to_passed_checks(results: list[CheckResult]) -> None:
    """A sentence of a hint that sends the candidate to other checks of the part ("See
    part3.gradients for the evidence", "Fix part3.forward first") when every one of them
    passed points nowhere, and blames what is right: it is dropped, and what the rest of the
    hint says stands (the line a repair found, say); where nothing is left, the check's own
    message speaks."""
    passed_ids = {r.id for r in results if r.status == "passed"}

    def misleads(sentence: str, own: str) -> bool:
        named = set(CHECK_ID.findall(sentence)) - {own}
        return bool(named) and named <= passed_ids

    for result in results:
        if result.status == "passed" or not result.hint:
            continue
        said = sentences(result.hint)
        kept = [s for s in said if not misleads(s, result.id)]
        if len(kept) < len(said):
            result.hint = " ".join(kept) or None


def run_baselines(grading: _Part) -> dict[int, dict[str, Any]]:
    """Each plan's baseline probe, frame by plan index, all in one child with no candidate
    code: a process each would cost a fork and the reference's import per check, for probes
    whose CPU time nobody reads. A measured plan's baseline runs are taken with its own,
    round by round (_measure), each in a process of its own."""
    indices = [index for index, plan in enumerate(grading.plans)
               if plan.baseline is not None and plan.measured is None]
    if not indices:
        return {}
    job = grading.reference_job(indices[0], [
        (*grading.plans[i].baseline, grading.plans[i].uses_device)  # type: ignore[misc]
        for i in indices])
    frames = _reference_frames(grading, fork_spawner(grading.round), indices, job)
    return dict(zip(indices, frames, strict=True))


def _baseline_frame(grading: _Part, local: Spawn, index: int,
                    run: dict[str, Any] | None) -> dict[str, Any]:
    return _reference_frame(grading, local, index, grading.baseline_job(index, run))


def _reference_frame(grading: _Part, local: Spawn, index: int,
                     job: ChildJob) -> dict[str, Any]:
    """The frame of a child with no candidate code running one call, for plan `index`."""
    return _reference_frames(grading, local, [index], job)[0]


def _reference_frames(grading: _Part, local: Spawn, indices: list[int],
                      job: ChildJob) -> list[dict[str, Any]]:
    """The frames of a child with no candidate code (see reference_job) running a call for
    each plan of `indices`, each with the CPU seconds the child cost in all; an error frame
    for a call that used up its plan's CPU time or where the child died, a starved_frame where
    it was kept from running: only the clock's backstop stopped it, or it sat idle through its
    limit (the grader's own code never waits on anything: a process stopped, frozen or
    blocked on the disk was the machine's doing). The calls after one that got no frame get
    the same frame."""
    request, child = grading.request, local(job)
    frames: list[dict[str, Any]] = []
    for index in indices:
        child.release()
        limit = frame_timeout(request, grading.plans[index], grading.ready)
        try:
            frame = next_frame(child, limit, progress=grading.alive)
        except FrameTimeout as exc:
            child.end(kill=True)
            stopped = starved_frame(f"the process running the reference "
                                    f"{timeout_words(exc, limit, None)}") \
                if exc.why in ("wall", "idle") \
                else dict(probe_frame("error", message="the reference did not finish in time"))
            return frames + [stopped] * (len(indices) - len(frames))
        grading.alive()
        if frame is None:
            ended = child.end(kill=True)
            words = f"the process running the reference {ended.how}"
            died = starved_frame(words, ended.machine) if ended.machine \
                else dict(probe_frame("error", message=words))
            return frames + [died] * (len(indices) - len(frames))
        frames.append(frame)
    ended = child.end(kill=False)
    return [{**frame, "cpu_s": ended.cpu_s} for frame in frames]


ANSWERS_KEPT_BYTES = 64 << 20
"""How much of the diagnosis children's answers a worker keeps (see _diagnosis_frame), by
pickled size; the least recently used go first."""


class _Answers:
    """Diagnosis answers by (job, row, column) digest, within a number of bytes."""

    def __init__(self, limit: int) -> None:
        self._limit = limit
        self._kept: OrderedDict[tuple[str, str, str], tuple[Any, int]] = OrderedDict()
        self._bytes = 0

    def get(self, key: tuple[str, str, str]) -> tuple[bool, Any]:
        """(True, the answer) when kept, else (False, None)."""
        if key not in self._kept:
            return False, None
        self._kept.move_to_end(key)
        return True, self._kept[key][0]

    def keep(self, key: tuple[str, str, str], answer: Any) -> None:
        size = len(pickle.dumps(answer, protocol=pickle.HIGHEST_PROTOCOL))
        if key in self._kept or size > self._limit:
            return
        self._kept[key] = (answer, size)
        self._bytes += size
        while self._bytes > self._limit:
            self._bytes -= self._kept.popitem(last=False)[1][1]


_answers = _Answers(ANSWERS_KEPT_BYTES)


def _digest(value: Any) -> str:
    return hashlib.sha256(pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)).hexdigest()


def _diagnosed(grading: _Part, index: int, verdict: Verdict) -> Verdict:
    """The verdict, its hint naming the mistake where its diagnosis probe (each stage run in a
    child with no candidate code, like a baseline, until one names it) finds one; as it was
    where the probe finds none, fails or runs out of time."""
    diagnosis = verdict.diagnosis
    assert diagnosis is not None
    observations: list[Any] = []
    named = None
    for args in diagnosis.stages:
        frame = _diagnosis_frame(grading, index, diagnosis, args)
        if starved(frame):
            return replace(verdict, hint=" ".join(filter(None, (verdict.hint, NOT_NAMED))),
                           diagnosis=None)
        if frame["kind"] != "observation":
            break
        observations.append(frame["data"])
        named = diagnosis.name(observations)
        if named:
            break
    kind = diagnosis.unsettled(named) if named else None
    if diagnosis.repair is not None and (named is None or kind is not None):
        # What the hint says beside a line the repair finds: the known mistake it names, or
        # else the slip's kind where a weak name gave one, or else the verdict's own hint
        # (what holds, the recipe).
        kept = verdict.hint if diagnosis.keep_hint else kind or verdict.hint
        grading.repairs.append((grading.checks[index].id, diagnosis.repair, kept,
                                diagnosis.keep_hint))
    if named and diagnosis.keep_hint and verdict.hint:
        named = f"{verdict.hint} {named}"
    return replace(verdict, hint=named or verdict.hint, diagnosis=None)


def name_by_repairs(grading: _Part) -> None:
    """Each failure left unnamed, or named weakly (_Part.repairs), gets the name its Repair
    finds in front of the hint kept beside it (what holds and the recipe, or a weak name's
    kind of slip without the reference's line), or after it where the verdict's hint names
    a known mistake already (the line then shows where it is), where the check still
    failed; where the repair finds none, the hint stays as it is."""
    for check_id, repair, before, known in grading.repairs:
        index = next(i for i, check in enumerate(grading.checks) if check.id == check_id)
        result = next((r for r in grading.results if r.id == check_id), None)
        if result is None or result.status != "failed":
            continue
        named = _repaired(grading, index, repair)
        if named == NOT_NAMED:
            result.hint = " ".join(filter(None, (result.hint, NOT_NAMED)))
        elif named:
            # `before` is the verdict's hint as the table wrote it, for every flavor.
            said = (for_flavor(before, grading.contexts[index].flavor) if before else None,
                    named)
            result.hint = " ".join(filter(None, said if known else reversed(said)))


def _repaired(grading: _Part, index: int, repair: Repair) -> str | None:
    """The hint a Repair names, each stage run in a child beside the candidate's code (the
    variants are the candidate's code), until one names it; None where none does, or where
    a child does not answer in its check's time (its own allowance of sleep: the part's is
    not spent on a hint); NOT_NAMED where the machine starved a child (what a quieter run
    would name is unknown). Answers are never kept: code can answer as it likes."""
    observations: list[Any] = []
    limit = frame_timeout(grading.request, grading.plans[index], grading.ready)
    idle, spent = IdleBudget(limit), [0.0]
    for args in repair.stages():
        if spent[0] >= limit:
            return None
        frame = _candidate_frame(grading, index, repair.probe, args, idle, spent, limit)
        if starved(frame):
            return NOT_NAMED
        if frame is None or frame["kind"] != "observation":
            return None
        observations.append(frame["data"])
        try:
            named = repair.name(observations)
        except Exception:  # noqa: BLE001 - the observations are candidate code's answers
            return None
        if named:
            return named
    return None


def _candidate_frame(grading: _Part, index: int, probe: str, args: dict[str, Any],
                     idle: IdleBudget, spent: list[float], limit: float
                     ) -> dict[str, Any] | None:
    """The frame of `probe` run with `args` in a child that imported the candidate's part, with
    plan `index`'s filters; None where the child could not start, did not import the part, hung
    or died; a starved_frame where only the clock's backstop stopped it (the machine's doing).
    Its sleep comes out of `idle` and its CPU time is added to `spent[0]`, which the
    repair's children share, up to `limit` (one check's): code that sleeps or spins at import,
    once in each variant, costs one check's time in all, not one per stage.
    Nothing of it is a result of the part's."""
    request, plan = grading.request, grading.plans[index]
    job = _job(request, grading.round, str(request.root), grading.part.module,
               [{**_plan_call(plan), "probe": probe}], [args], index, grading.ready)
    left = limit - spent[0]
    try:
        child = grading.spawn(job)
    except ChildrenLost:
        return None
    ended = None
    try:
        hello = next_frame(child, left, idle, grading.alive)
        if hello is None or hello["kind"] in IMPORT_FAILED:
            return None
        child.release()
        frame = next_frame(child, left, idle, grading.alive)
        ended = child.end(kill=True)
        return frame
    except FrameTimeout as exc:
        return starved_frame(f"the process trying changes to your code "
                             f"{timeout_words(exc, left, idle)}") if exc.why == "wall" else None
    finally:
        spent[0] += (ended or child.end(kill=True)).cpu_s


def _diagnosis_frame(grading: _Part, index: int, diagnosis: Diagnosis,
                     args: dict[str, Any]) -> dict[str, Any]:
    """The observation of one stage of a diagnosis, its grid of answers (Diagnosis.grid): those
    the worker kept from earlier jobs as they were, the others from a child run on the rows
    and columns that lack one; the child's error frame where it ran out of time or died. The
    child runs only the reference's mutants on judge-made cases (no candidate code, nothing
    timed into a verdict), so an answer depends on its job, row and column alone. Only
    `lasting` answers are kept: one stopped for time (a quieter moment might have let it
    finish) is asked again next time, so that a busy moment during one submission does not
    shape the hints of those after it."""
    rows_name, columns_name = diagnosis.grid
    rows, columns = args[rows_name], args[columns_name]
    job = _digest(grading.reference_job(index, [
        (diagnosis.probe, {**args, rows_name: None, columns_name: None}, False)]))
    row_keys, column_keys = [_digest(r) for r in rows], [_digest(c) for c in columns]
    answers: dict[tuple[int, int], Any] = {}
    for i, row in enumerate(row_keys):
        for j, column in enumerate(column_keys):
            kept, answer = _answers.get((job, row, column))
            if kept:
                answers[i, j] = answer
    missing_rows = [i for i in range(len(rows))
                    if any((i, j) not in answers for j in range(len(columns)))]
    if missing_rows:
        missing_columns = [j for j in range(len(columns))
                           if any((i, j) not in answers for i in missing_rows)]
        asked = grading.reference_job(index, [(diagnosis.probe, {
            **args, rows_name: [rows[i] for i in missing_rows],
            columns_name: [columns[j] for j in missing_columns]}, False)])
        frame = _reference_frame(grading, fork_spawner(grading.round, sweep=False), index,
                                 asked)
        if frame["kind"] != "observation":
            return frame
        grid = frame["data"]
        if not (isinstance(grid, list) and len(grid) == len(missing_rows) and all(
                isinstance(row, list) and len(row) == len(missing_columns) for row in grid)):
            return dict(probe_frame("error", message="the diagnosis child's answers are not "
                                    "one per row and column"))
        for i, answered in zip(missing_rows, grid, strict=True):
            for j, answer in zip(missing_columns, answered, strict=True):
                answers.setdefault((i, j), answer)
                if diagnosis.lasting(answer):
                    _answers.keep((job, row_keys[i], column_keys[j]), answer)
    return {"kind": "observation",
            "data": [[answers[i, j] for j in range(len(columns))] for i in range(len(rows))]}


def _with_baseline(frame: dict[str, Any], baseline: dict[str, Any] | None) -> dict[str, Any]:
    """The observation a judge with a baseline receives."""
    if baseline is None or frame["kind"] != "observation":
        return frame
    ok = baseline["kind"] == "observation"
    return {**frame, "data": {"yours": frame["data"], "baseline": baseline["data"] if ok
                              else None, "baseline_error": "" if ok else baseline["message"]}}


def _keep_calls(grading: _Part, index: int, frame: dict[str, Any]) -> None:
    """Keep what each call of check `index` kept, where a later plan borrows its calls."""
    check_id = grading.checks[index].id
    if frame["kind"] != "observation" or not any(check_id in p.borrows for p in grading.plans):
        return
    rows, cases = frame["data"], grading.plans[index].args.get("cases")
    if isinstance(rows, list) and isinstance(cases, list):
        grading.kept[check_id] = [(str(case.get("label", "")), row.get("kept"))
                                  for case, row in zip(cases, rows, strict=False)
                                  if isinstance(case, dict) and isinstance(row, dict)]


def judge_borrowed_calls(grading: _Part) -> None:
    """Each check that passed and borrows another's calls (Plan.borrows: a property also
    judged in the calls of the check of values, which code cannot tell from any other),
    judged again with what those calls kept, once every check has run (the check of values
    may come after it in the table); a property one of them broke fails the check."""
    for index, frame in grading.borrowing.items():
        plan, check = grading.plans[index], grading.checks[index]
        result = next((r for r in grading.results if r.id == check.id), None)
        kept = [call for borrowed in plan.borrows for call in grading.kept.get(borrowed, [])]
        if result is None or result.status != "passed" or not kept \
                or frame["kind"] != "observation":
            continue
        data = frame["data"]
        if not (isinstance(data, dict) and "yours" in data):
            data = {"yours": data, "baseline": None, "baseline_error": ""}
        verdict, _ = _judge(plan, {**frame, "data": {**data, "kept": kept}})
        if verdict.status == "failed":
            _restate(grading, result, verdict)


def _restate(grading: _Part, result: CheckResult, verdict: Verdict) -> None:
    """A judged check's result told again by another verdict of its own (what its property
    came to once the part's other checks were seen), its hint in the candidate's flavor."""
    result.status, result.message = verdict.status, verdict.message
    result.hint = verdict.hint and for_flavor(verdict.hint, grading.request.flavor)
    result.score = result.max_score * (1.0 if verdict.status == "passed" else verdict.fraction)


def _judge(plan: Plan, frame: dict[str, Any]) -> tuple[Verdict, Status | None]:
    """Turn a child's frame into a verdict (and a status override for errors)."""
    kind = frame["kind"]
    if kind == "observation":
        try:
            return plan.judge(frame["data"]), None
        except Exception as exc:  # noqa: BLE001 - odd data from odd candidate code
            return Verdict("failed", f"could not judge this result: {type(exc).__name__}: "
                           f"{exc}"), "error"
    if kind == "not_implemented":
        return Verdict("failed", f"not implemented yet ({frame['message']})",
                       "Fill in the stub, then run the check again.", stub=True), None
    if kind == "fault":
        return Verdict("failed", frame["message"], FAULT_HINT), None
    return Verdict("failed", frame["message"]), "error"


FAULT_HINT = ("What your code returned is not of the form the exercise asks for (the line above "
              "says what came back and what was expected): return exactly what its docstring "
              "gives, the same types in the same order.")
"""The hint of a check whose probe could not read what the code returned (a CandidateFault):
a failure without a word of what to do is no help."""


def _time_out(grading: _Part, child: Child, index: int, exc: FrameTimeout, why: str,
              what: str, began: float, output: str) -> int:
    """Kill a child that hung in checks[index] (or in `what` before it); the part's remaining
    checks are not run, so a hang costs one timeout per part, not one per check. A child that
    only the clock's backstop stopped was starved, not hung: that check and the rest of the
    part are undecided (their points held for a run on a quieter machine), not failed."""
    printed, where = child.last_words()
    output += printed
    if where:
        why += f"\n  it was at {where}"
    child.end(kill=True)
    duration = time.perf_counter() - began
    if exc.why == "wall":
        grading.result(index, Verdict("undecided", f"{STARVED}\n{why}"), duration, output,
                       "undecided")
        return grading.not_run(index + 1,
                               f"not run: {TOO_BUSY.format(what='the rest of this part')}",
                               status="undecided")
    grading.result(index, Verdict("failed", why), duration, output, "timeout")
    return grading.not_run(index + 1, f"not run: {what} timed out", by_the_code=True)


def _hung_in_check(grading: _Part, child: Child, index: int, exc: FrameTimeout, limit: float,
                   began: float, printed: str) -> int:
    """_time_out for a child that ran out of checks[index]'s limit."""
    why = f"{timeout_words(exc, limit, grading.idle)}; the rest of this part was not run"
    return _time_out(grading, child, index, exc, why, grading.checks[index].id, began, printed)


def _imported(grading: _Part, child: Child, index: int) -> tuple[str | None, int]:
    """Wait for the child to import the part: (what it printed meanwhile, index), or (None,
    the index to go on from) when the import failed or hung and checks[index:] are reported.
    A child that never got set up (children.Setup) leaves checks[index] alone undecided, and a
    fresh child takes the next check: the machine refused this one something, and its sleep
    before then is none of the part's."""
    request, part = grading.request, grading.part
    began = time.perf_counter()
    sleep_left = grading.idle.left_s
    try:
        hello = next_frame(child, request.timeout_s, grading.idle, grading.alive)
    except FrameTimeout as exc:
        if child.setup.before_the_code:
            child.end(kill=True)
            grading.idle.left_s = sleep_left
            return None, _not_set_up(grading, index, began, NOT_SET_UP.format(
                why="its own setup did not finish in the time allowed for importing the part"))
        why = timeout_words(exc, request.timeout_s, grading.idle, part.file)
        return None, _time_out(grading, child, index, exc, why, "importing the part", began,
                               "")
    grading.alive()
    if hello is not None and refused_a_file(hello):
        child.end(kill=True)
        return None, grading.not_run(index, f"{FILES_FULL.format(file=part.file)}:\n"
                                     f"{hello['message']}", status="undecided")
    if hello is None or hello["kind"] in IMPORT_FAILED:
        ended = child.end(kill=True)
        if child.setup.before_the_code and ended.machine:
            return None, _not_set_up(grading, index, began, ended.machine)
        why = (f"could not import {part.file}:\n{hello['message']}" if hello
               else f"the process importing {part.file} {ended.how}")
        if hello is None and ended.machine:
            return None, grading.not_run(index, _machine_first(ended, why), status="undecided")
        return None, grading.not_run(index, why, status="error",
                                     output=hello["output"] if hello else "")
    return str(hello["output"]), index


def _not_set_up(grading: _Part, index: int, began: float, why: str) -> int:
    """checks[index] undecided for `why` (its child was never set up); the next index."""
    grading.result(index, Verdict("undecided", why), time.perf_counter() - began, "",
                   "undecided")
    return index + 1


def _probe(grading: _Part, child: Child, index: int,
           printed: str) -> tuple[dict[str, Any] | None, int]:
    """Wait for checks[index]'s frame: (the frame, index), or (None, the index to go on from)
    when the child hung (the part is over) or died (a fresh child takes the next check)."""
    began = time.perf_counter()
    limit = frame_timeout(grading.request, grading.plans[index], grading.ready)
    try:
        frame = next_frame(child, limit, grading.idle, grading.alive)
    except FrameTimeout as exc:
        return None, _hung_in_check(grading, child, index, exc, limit, began, printed)
    grading.alive()
    if frame is None:
        ended = child.end(kill=True)
        what = f"the process running your code {ended.how} during this check"
        if ended.machine:
            grading.result(index, Verdict("undecided", _machine_first(ended, what)),
                           time.perf_counter() - began, printed, "undecided")
            return None, index + 1
        guess = "the memory it may hold ran out" if ended.how == strays.OUT_OF_MEMORY \
            else "os._exit, a crash, or the memory cap?"
        grading.result(index, Verdict("failed", f"{what} ({guess})"),
                       time.perf_counter() - began, printed, "error")
        return None, index + 1
    if frame["kind"] in ANSWERS and frame["index"] != index:
        frame = dict(probe_frame("error", index, f"a result for check {frame['index']} "
                                 f"arrived where check {index}'s was due: not believed"))
    # The check's duration is this process's clock, never the child's word.
    return {**frame, "duration_s": time.perf_counter() - began}, index


def _collect(grading: _Part, child: Child, index: int, stop: int,
             baselines: dict[int, dict[str, Any]]) -> int:
    """Read one child's frames for checks[index:stop]; the index of the first still to run."""
    printed, index = _imported(grading, child, index)
    if printed is None:
        return index
    while index < stop:
        child.release()
        frame, index = _probe(grading, child, index, printed)
        if frame is None:
            return index
        baseline = baselines.get(index)
        _keep_calls(grading, index, frame)
        framed = _with_baseline(frame, baseline)
        if grading.plans[index].borrows:
            grading.borrowing[index] = framed
        verdict, status = (Verdict("undecided", baseline["message"]), "undecided") \
            if baseline is not None and starved(baseline) \
            else _judge(grading.plans[index], framed)
        if verdict.diagnosis is not None:
            verdict = replace(verdict, diagnosis=None) if grading.folded(index, verdict) \
                else _diagnosed(grading, index, verdict)
        grading.result(index, verdict, frame["duration_s"], printed + frame["output"], status)
        printed = ""
        index += 1
    child.end(kill=False)
    return index


def _measure(grading: _Part, index: int) -> int:
    """Take plan `index`'s measurement round by round (see Measured): each run in a fresh child
    whose CPU time the kernel reports here, the baseline's run of the same entry just before
    it; judge once `least` rounds are in, and again after each further round while the
    verdict is undecided. The index of the next check."""
    plan = grading.plans[index]
    measured = plan.measured
    assert measured is not None
    local = fork_spawner(grading.round)
    taken = _Taken([], [] if plan.baseline is not None else None)
    verdict, status = Verdict("undecided", ""), None
    for number, runs in enumerate(measured.rounds, start=1):
        taken.yours.append([])
        if taken.theirs is not None:
            taken.theirs.append([])
        for run in runs:
            if taken.theirs is not None and not taken.baseline_error:
                frame = _baseline_frame(grading, local, index, run)
                if starved(frame):
                    grading.result(index, Verdict("undecided", frame["message"]),
                                   taken.duration, taken.output, "undecided")
                    return index + 1
                if frame["kind"] == "observation":
                    taken.theirs[-1].append({"data": frame["data"], "cpu_s": frame["cpu_s"]})
                else:
                    taken.baseline_error = frame["message"]
            failure, next_index = _measured_run(grading, index, run, taken)
            if failure is not None:  # the probe failed: that is the verdict
                verdict, status = _judge(plan, failure)
                grading.result(index, verdict, taken.duration, taken.output, status)
                return index + 1
            if next_index != index:
                return next_index
            if measured.early and (decided := measured.early(taken.both())) is not None:
                grading.result(index, decided, taken.duration, taken.output, None)
                return index + 1
        if number < measured.least:
            continue
        verdict, status = _judge(plan, {"kind": "observation", "data": taken.both()})
        if verdict.status != "undecided":
            break
    if verdict.status == "undecided":
        too_busy = TOO_BUSY.format(what=f"this (its measurements still disagreed after "
                                        f"{len(taken.yours)} rounds)")
        verdict = Verdict("undecided", f"{too_busy}\n{verdict.message}".rstrip("\n"))
    grading.result(index, verdict, taken.duration, taken.output, status)
    return index + 1


@dataclass
class _Taken:
    """A measurement's runs so far, round by round, and what its children printed."""

    yours: list[list[dict[str, Any]]]
    theirs: list[list[dict[str, Any]]] | None
    baseline_error: str = ""
    output: str = ""
    duration: float = 0.0

    def both(self) -> dict[str, Any]:
        """What the judge (and the cap) receive."""
        return {"yours": self.yours, "baseline": None if self.baseline_error else self.theirs,
                "baseline_error": self.baseline_error}


def _measured_run(grading: _Part, index: int, run: dict[str, Any],
                  taken: _Taken) -> tuple[dict[str, Any] | None, int]:
    """One run of the candidate's, added to `taken`: (None, index) when it was measured or
    stopped at the plan's cap; (its frame, index) when the probe answered with no observation;
    (None, the index to go on from) when the child hung or died (the check is reported)."""
    measured = grading.plans[index].measured
    assert measured is not None
    cap = measured.cap(taken.both()) if measured.cap else None
    child = grading.spawn(grading.job(index, index + 1, run))
    printed, next_index = _imported(grading, child, index)
    if printed is None:
        return None, next_index
    # What importing the candidate's file cost is no work of the calls: a file that imports
    # scipy pays a tenth of a second in every process, at every size, and would read as a
    # fixed cost far above the reference's.
    imported = child.usage()
    since = imported.cpu_s if imported is not None else 0.0
    child.release()  # only now: no work on the run's inputs can hide in `since`
    try:
        capped = cap is not None and _stopped_at_cap(grading, child, index, cap + since)
    except FrameTimeout as exc:  # starved past the check's own backstop
        limit = frame_timeout(grading.request, grading.plans[index], grading.ready)
        return None, _hung_in_check(grading, child, index, exc, limit, time.perf_counter(),
                                    printed)
    if cap is not None and capped:
        taken.yours[-1].append({"data": None,
                                "cpu_s": max(child.end(kill=True).cpu_s - since, cap),
                                "capped": True})
        return None, index
    frame, next_index = _probe(grading, child, index, printed)
    if frame is None:
        return None, next_index
    ended = child.end(kill=False)
    taken.output += printed + frame["output"]
    taken.duration += frame["duration_s"]
    if frame["kind"] != "observation":
        return frame, index
    taken.yours[-1].append({"data": frame["data"], "cpu_s": ended.cpu_s - since})
    return None, index


def _stopped_at_cap(grading: _Part, child: Child, index: int, cap_s: float) -> bool:
    """Wait for the child's frame until it has used `cap_s` of CPU in all (its fork and import
    included): whether it got there first. Any other end of the wait (a frame, a child idle
    past the check's own allowance of sleep) is left to the usual wait that follows. The clock
    stops this wait only at the check's own backstop, so a run starved by a busy machine still
    reaches its cap; past that backstop, FrameTimeout("wall") for the caller to report."""
    usage = child.usage()
    if usage is None:
        return False
    left = cap_s - usage.cpu_s
    limit = frame_timeout(grading.request, grading.plans[index], grading.ready)
    if left >= limit:
        return False
    try:
        wait_readable(child, max(left, 0.0), grading.idle, grading.alive,
                      backstop_s=BACKSTOP * limit, idle_s=limit,
                      files_most=files_most(child))
    except FrameTimeout as exc:
        if exc.why in ("wall", "files", "hidden"):
            raise
        return exc.why == "cpu" or left <= 0
    return False


def probe_once(request: Request, round_: Round, part: Part, plan: Plan, spawn: Spawn,
               alive: Callable[[], None]) -> dict[str, Any]:
    """Run one probe (and its baseline) in fresh children, waited for as a check's are (the
    device's setup allowance, the part's idle allowance, progress heard by `alive`): its frame,
    with the baseline folded in, or an error frame saying why none came (the import failed,
    the time ran out, the process died)."""
    grading = _Part(request, round_, part, [], [], [plan], spawn, alive)
    limit = frame_timeout(request, plan, grading.ready)
    with device_turn(grading.ready):
        baseline = (_baseline_frame(grading, fork_spawner(round_), 0, None)
                    if plan.baseline is not None else None)
        if baseline is not None and starved(baseline):
            return dict(probe_frame("error", message=baseline["message"]))
        try:
            child = spawn(grading.job(0, 1))
        except ChildrenLost as lost:
            return dict(probe_frame("error", message=str(lost)))
        try:
            hello = next_frame(child, request.timeout_s, grading.idle, alive)
            if hello is not None and refused_a_file(hello):
                child.end(kill=True)
                return starved_frame(hello["message"], FILES_FULL.format(file=part.file))
            if hello is None or hello["kind"] in IMPORT_FAILED:
                ended = child.end(kill=True)
                return dict(probe_frame("error", message=hello["message"] if hello
                                        else _machine_first(ended, f"the process importing "
                                                                   f"{part.file} {ended.how}")))
            child.release()
            frame = next_frame(child, limit, grading.idle, alive)
        except FrameTimeout as exc:
            child.end(kill=True)
            words = timeout_words(exc, limit, grading.idle)
            return dict(probe_frame("error", message=f"{STARVED}\n{words}"
                                    if exc.why == "wall" else words))
    ended = child.end(kill=frame is None)
    if frame is None:
        return dict(probe_frame("error", message=_machine_first(
            ended, f"the process running your code {ended.how}")))
    return _with_baseline(frame, baseline)


IMPORT_FAILED = ("import_error", "import_refused")
"""The kinds of a child's first frame after its setup that say the part's import failed: by
the code's doing, or (import_refused) for want of a file, believed only by refused_a_file."""


def refused_a_file(hello: dict[str, Any]) -> bool:
    """Whether a child's import failed for want of a file the machine had none left to give:
    the child says so (import_refused), and the machine's table of open files is crowded as
    this process sees it. The child's word alone is the code's to forge (an OSError of ENFILE
    raised at import would put every check of the part beyond judging): without the table to
    show for it, the failed import is the code's, as any other."""
    return hello["kind"] == "import_refused" and strays.files_crowded()


def _machine_first(ended: Ended, words: str) -> str:
    """`words` on a child that ended, after what the machine did to it, where it did."""
    return f"{ended.machine}\n{words}" if ended.machine else words


def heartbeat(request: Request, emit: Emit) -> Callable[[], None]:
    """A call that tells the CLI's watchdog the request is making progress (at most once a
    second)."""
    last = [0.0]

    def alive() -> None:
        if time.monotonic() - last[0] >= 1.0:
            last[0] = time.monotonic()
            emit({"type": "alive", "request": request.id})

    return alive


def handle_followups(request: Request, round_: Round, emit: Emit, spawn: Spawn) -> None:
    """Run each part's follow-up demonstration; emit its evidence (interpreted here, where no
    candidate code ran), then `done`."""
    from grader.checks.followups import followup_for, plan_followup

    judge = load_module(round_, "checks")
    alive = heartbeat(request, emit)
    for part_id in request.parts:
        followup = followup_for(round_, part_id, request.flavor)
        if followup is None:
            continue
        plan, interpret = plan_followup(followup, judge, request.seed
                                        if request.hidden_seed is None else request.hidden_seed)
        frame = probe_once(request, round_, round_.part(part_id), plan, spawn, alive)
        try:
            evidence = interpret(frame)
        except Exception as exc:  # noqa: BLE001 - odd data from odd candidate code
            evidence = {"status": "unavailable", "why": f"{type(exc).__name__}: {exc}"}
        emit({"type": "followup", "request": request.id, "part": part_id, "evidence": evidence})


def handle(request: Request, emit: Emit, children: Children) -> bool:
    """Grade one request, emitting part and check events, then `done`; whether this worker
    retires after it (see DoneEvent). `children` gives the request its way of running
    candidate code (forked here, or one sandbox for the request)."""
    round_ = get_round(request.round)
    with children(request, round_) as spawn:
        if request.kind == "followup":
            handle_followups(request, round_, emit, spawn)
        else:
            grade_request(request, round_, emit, spawn)
    retire = not strays.limits_set_back()
    emit({"type": "done", "request": request.id, "retire": retire})
    return retire


def grade_request(request: Request, round_: Round, emit: Emit, spawn: Spawn) -> None:
    alive = heartbeat(request, emit)
    graded: list[PartResult] = []
    for part_id in request.parts:
        part = round_.part(part_id)
        emit({"type": "part_start", "request": request.id, "part": part.id})
        results = grade_part(request, round_, part, graded, spawn, alive)
        for result in results:
            emit({"type": "check", "request": request.id, "part": part.id,
                  "result": asdict(result)})
        graded.append(PartResult(part.id, part.title, results))
        emit({"type": "part_end", "request": request.id, "part": part.id})


@contextmanager
def forked_children(request: Request, round_: Round) -> Iterator[Spawn]:
    """Practice mode: children forked from this worker."""
    yield fork_spawner(round_)


def serve(stdin: TextIO, stdout: TextIO, children: Children = forked_children) -> None:
    """Answer requests (one JSON object per line) until stdin closes, or until one leaves this
    process unfit to answer another (DoneEvent.retire)."""

    def emit(event: Event) -> None:
        stdout.write(json.dumps(event) + "\n")
        stdout.flush()

    ready_to_fork()
    strays.become_subreaper()
    # Undumpable: code under test, though it runs as this user, can neither trace this process
    # nor open its /proc/<pid>/fd (its stdout is the line the CLI believes).
    strays.set_dumpable(False)
    strays.keep_limits()
    emit({"type": "ready", "cuda": cuda_in_reach()})
    for line in stdin:
        if not line.strip():
            continue
        request_id = ""
        try:
            data = json.loads(line)
            request_id = str(data.get("id", ""))
            if handle(Request.from_dict(data), emit, children):
                return
        except Exception as exc:  # noqa: BLE001 - a grader bug must not kill the pool
            emit({"type": "fatal", "request": request_id,
                  "message": f"{type(exc).__name__}: {exc}", "trace": traceback.format_exc()})
