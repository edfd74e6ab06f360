"""The shape of a hidden check: a plan made by the judge, a probe run beside candidate code, a
verdict.

A check's `plan(ctx) -> Plan` runs in the judge (a process where no candidate code ever ran): it
builds the inputs and keeps the expected values. The plan names a probe (a generic one from
grader.probes.library, or one of the round's probes) and gives it plain data; the runner executes
that probe in a child that imported the candidate's file, and hands the observation (plain data)
back to `judge`, which turns it into a Verdict. Keeping every comparison in `judge` is what makes
a monkeypatched `numpy.allclose` in an exercise file prove nothing.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from grader.engine.limits import DEFAULT_TIMEOUT_S

VerdictStatus = Literal["passed", "failed", "skipped", "undecided"]
Need = Literal["cuda"]


@dataclass(frozen=True)
class Repair:
    """The look a Diagnosis takes last, where the reference's slips named nothing: one-change
    variants of the candidate's own file (the same slips, made in the code the candidate
    wrote: a candidate's slip undone is one of them), run in stages by `probe` in a child
    beside the candidate's code, since they are candidate code; `stages` makes them (only
    where the repair is run: most failures are named before it); `name` turns the observations
    of the stages run so far into the hint that names the change making the wrong cases right,
    or None. Nothing but a hint depends on it: the code that runs it could answer anything."""

    probe: str
    stages: Callable[[], tuple[dict[str, Any], ...]]
    name: Callable[[list[Any]], str | None]


@dataclass(frozen=True)
class Recheck:
    """A watched call that answered otherwise than the reference, made again the plain way
    (`probe` with `args`: the same inputs, called as the checks of the values call, in a
    child of its own), for a failure that would give way to the values' own (Verdict.by_values):
    `alike(observation)` says whether the plain call answered as the watched one did. An
    honest slip answers both alike; code that tells a watched call apart does not, and
    failing a values check on purpose then launders nothing."""

    probe: str
    args: dict[str, Any]
    alike: Callable[[Any], bool]


@dataclass(frozen=True)
class Diagnosis:
    """A second look a failing verdict asks for when it could not name the mistake: `probe`
    runs in a child that holds no candidate code (the reference's mutants, say), once per
    stage, with that stage's `stages` arguments, and `name` turns the observations of the
    stages run so far (in order) into the hint that names the slip, or None (the verdict's own
    hint stands). Stages run in order until `name` finds a name: a long search (hundreds of
    mutants) puts its likeliest part first and stops at its first answer, never changing
    which answer that is. `keep_hint`: the verdict's hint already names a known mistake (a
    class of slips); the sentence that names the statement goes after it, not in its place.

    `grid` names two list arguments of every stage, its rows and its columns (the mutants and
    the cases): the probe answers with a list per row of one answer per column, each depending
    on its row and column alone, so that a worker keeps answers, not stages, and runs a child
    only for those it has not kept (a class shares a seed, `watch` re-checks after each save,
    and most slips are wrong on the same few smallest cases). `lasting`: whether one answer is
    the same on any machine, so that it may be kept (one stopped for time is not). `repair`:
    the look to take where the stages name nothing (see Repair), or name a slip by a line
    the candidate's file does not hold: for such a name `unsettled` gives the slip's kind
    alone, which follows the repair's name where it finds one (the line then is the
    candidate's own); None for a name that stands."""

    probe: str
    stages: tuple[dict[str, Any], ...]
    grid: tuple[str, str]
    name: Callable[[list[Any]], str | None]
    keep_hint: bool = False
    lasting: Callable[[Any], bool] = lambda answer: True
    repair: Repair | None = None
    unsettled: Callable[[str], str | None] = lambda named: None


@dataclass(frozen=True)
class Verdict:
    """What the judge decided. `fraction` is the share of the points earned; `stub`: the
    candidate has not started on what this check looks at (an empty EXPLANATION);
    `diagnosis`: how the runner may name the mistake the verdict could not; `voids`: the
    failure is evidence against how the values were made (autograd seen inside a backward by
    hand), so the checks the table says this one voids lose their points; with `otherwise`,
    only where the first of them (the check of the same answer) passed: the watched run
    raised or answered wrong, so values right elsewhere were made another way; where it did
    not pass, the trouble was the values' own and `otherwise` stands for this check instead. A
    failure for any other reason (a stub, an earlier part that raised) voids nothing. `alone`:
    no check the table names in `after` explains this failure (a cost measured, not a value),
    so the scorecard shows it as a trouble of its own even where they failed too. `by_values`:
    the failure stands only where every check of the part's values (rank 2) passed (a watched
    call that answered wrong, where the values are right elsewhere: code that tells the
    watched calls apart); where one did not, the wrong answer was the values' own trouble and
    `otherwise` (what the check found of its property) stands instead, unless `recheck` finds
    that the same call made the plain way answers otherwise than the watched one."""

    status: VerdictStatus
    message: str = ""
    hint: str | None = None
    fraction: float = 0.0
    not_applicable: bool = False
    stub: bool = False
    diagnosis: Diagnosis | None = None
    voids: bool = False
    otherwise: Verdict | None = None
    alone: bool = False
    by_values: bool = False
    recheck: Recheck | None = None


def passed(message: str = "") -> Verdict:
    return Verdict("passed", message, None, 1.0)


def failed(message: str, hint: str | None = None, fraction: float = 0.0) -> Verdict:
    return Verdict("failed", message, hint, fraction)


def not_started(message: str, hint: str | None = None) -> Verdict:
    """A failure because the stub is still a stub: the scorecard says "not implemented yet"."""
    return Verdict("failed", f"not implemented yet: {message}", hint, 0.0, stub=True)


def undecided(message: str) -> Verdict:
    """A measurement that cannot tell a pass from a failure yet: its rounds disagree about
    which side of the limit the code is on (a busy machine's noise). For a measured plan the
    runner measures another round; after the last it reports the check as undecided, which is
    neither a pass nor a failure."""
    return Verdict("undecided", message)


def skipped(message: str, not_applicable: bool = False) -> Verdict:
    """A check that did not run to a verdict. `not_applicable`: it cannot apply on this machine
    at all (GPU timing without a GPU), so it is worth no points here; otherwise (the candidate's
    code hid what the check measures) it keeps its points and earns none: a skip is no pass."""
    return Verdict("skipped", message, None, 0.0, not_applicable)


@dataclass(frozen=True)
class Measured:
    """A measurement in rounds, for a verdict that must not depend on how busy the machine is.

    Each round runs the probe once per entry of its runs (the entry's arguments merged into
    the plan's `args`), each run in a fresh process of its own, and the baseline's run of the
    same entry just before it, in a process without candidate code: the two share whatever
    the machine was doing at that moment. The judge then receives {"yours": rounds, "baseline":
    rounds or None, "baseline_error": why}, each round a list, run by run, of {"data": the
    probe's observation, "cpu_s": the CPU seconds the kernel charged that process, as its
    parent read them (a figure measured outside the candidate's process, so work hidden from
    the probe's counters still shows in it)}.

    The judge is first asked after `least` rounds. A verdict of `undecided` (the rounds
    disagree) gets the next round, until `rounds` runs out; then the check is reported as
    undecided: the machine was too busy to judge it. Each round has runs of its own (fresh
    nonces), so nothing a process kept answers a later round's calls.

    `cap`: the CPU seconds past which the candidate's next run would prove nothing the verdict
    does not already know (it has cost more than any passing code could), given the rounds so
    far (as the judge receives them, the current round's runs to date last); None for no cap.
    A run stopped there is recorded as {"data": None, "cpu_s": what it used, at least the cap,
    "capped": True}: code far too slow costs little more than passing code.

    `early`: asked after each of the candidate's runs, with the rounds so far; a verdict that
    no later run could change (what a probe counted, not a time), or None. A mistake the
    count already shows then costs no timed rounds."""

    rounds: tuple[tuple[dict[str, Any], ...], ...]
    least: int = 2
    cap: Callable[[dict[str, Any]], float | None] | None = None
    early: Callable[[dict[str, Any]], Verdict | None] | None = None

    def __post_init__(self) -> None:
        if not 1 <= self.least <= len(self.rounds) or not all(self.rounds):
            raise ValueError("a measurement needs at least `least` rounds, none of them empty")


@dataclass(frozen=True)
class Plan:
    """The two halves of a check: the probe to run beside candidate code, and the judge.

    `probe` names a generic probe or `round:<name>`; `args` are its keyword arguments, plain
    data only. `uses_device`: the probe may initialise CUDA. The runner then lifts the
    address-space cap for it (CUDA reserves far more virtual memory than any cap would allow,
    and cuInit fails under one) and allows it time to set the device up.

    `baseline`: a probe (name, args) the runner first runs in a child that never imports the
    candidate's code (the reference timed as a yardstick, the textbook code demonstrated). The
    judge then receives {"yours": observation, "baseline": its observation, or None with
    "baseline_error": why}.

    `measured`: the plan is a measurement, taken in rounds (see Measured) rather than once.

    `forkless`: the probe watches a call from inside the candidate's process (autograd used),
    so the child running it can start no process (grader.runner.nofork): work sent to another
    process would be out of the watch's sight.

    `watched`: the probe runs its calls under the autograd watch (a backward by hand's count,
    depth or timed calls), which sees the calling thread alone.

    `borrows`: the ids of checks of the same part (correctness rows) whose calls the judge
    also reads, once every check has run, as {"yours": ..., "baseline": ..., "kept": [(case
    label, what each call kept, see probes.library._kept_properties), ...]}: a property judged
    on the very calls whose values are judged, which code cannot tell from any other.
    """

    probe: str
    args: dict[str, Any]
    judge: Callable[[Any], Verdict]
    uses_device: bool = False
    baseline: tuple[str, dict[str, Any]] | None = None
    measured: Measured | None = None
    forkless: bool = False
    watched: bool = False
    borrows: tuple[str, ...] = ()

    @property
    def processless(self) -> bool:
        """Whether the child running this plan can start no process: a watch's (forkless,
        watched: work sent to another process is out of its sight), and a measurement's, whose
        CPU time a process the kernel reaps on its own (a child started with SIGCHLD ignored)
        would leave uncounted, its work charged to nobody."""
        return self.forkless or self.watched or self.measured is not None

    @property
    def threadless(self) -> bool:
        """Whether the child running this plan can start no thread either: wherever the
        autograd watch runs (forkless, watched), since a graph recorded on another thread is
        out of its sight; not where the device is used (CUDA makes threads of its own)."""
        return (self.forkless or self.watched) and not self.uses_device


@dataclass(frozen=True)
class Context:
    """What a plan may know: the run's seed, flavor and device, and its own check id.

    `graded_parts` / `passed_parts`: the parts graded, and those that passed every check,
    earlier in the same run (a probe may use the candidate's own earlier part only when it is
    known to work).

    `seed` is the run's public seed, the one messages may name; `hidden_seed`, under an
    instructor's secret, the one the inputs are drawn from instead (grader/engine/secret.py), which
    no message may name: draw inputs only from `rng()`.

    `workspace`: the candidate's workspace folder, read (never run) judge side to tell apart
    slips that give the same wrong results (mutants.by_evidence); None where none is graded."""

    seed: int
    flavor: str
    check_id: str
    device: str = "auto"
    timeout_s: float = DEFAULT_TIMEOUT_S
    cuda: bool = False
    graded_parts: tuple[str, ...] = ()
    passed_parts: tuple[str, ...] = ()
    hidden_seed: int | None = None
    workspace: str | None = None

    @property
    def part_id(self) -> str:
        return self.check_id.split(".", 1)[0]

    def rng(self) -> np.random.Generator:
        """A generator private to this check, so adding a check never shifts another's inputs."""
        return np.random.default_rng([self.inputs_seed, zlib.crc32(self.check_id.encode())])

    @property
    def inputs_seed(self) -> int:
        """The seed the inputs come from: never to be shown."""
        return self.seed if self.hidden_seed is None else self.hidden_seed

    def reproduce(self) -> str:
        secret = "" if self.hidden_seed is None else " and the instructor's secret"
        return f"reproduce with `grader check {self.part_id} --seed {self.seed}`{secret}"


Observed = Literal["outside", "inside"]
OBSERVED: tuple[Observed, ...] = ("outside", "inside")


@dataclass(frozen=True)
class Check:
    """One row of a round's check table.

    `needs`: what the machine must have for the check to apply at all ("cuda"); where it is
    missing, the check is worth no points (its share goes to the part's other checks).
    `after`: checks whose failure explains this one's (the scorecard folds it under them).
    `observed`: "inside" when the verdict rests on what the probe saw inside the candidate's
    process (autograd used, operations counted, memory, identity of objects, timing there)
    rather than on values it returned: in graded modes (`grade`, Gradescope) such a check
    advises and is worth no points, since a submission can forge it for itself.
    `voids`: checks of the same part whose results do not count when this one fails (a
    hand-written backward that used autograd earns nothing for its values); `void_message` says
    why, on each of them. `rank`: how likely a failure here is the mistake to fix first (2: the
    function's values, 1: its properties, 0: input validation and explanations), for the
    scorecard's order. `measured`: its plans are measured in timed rounds (Plan.measured), as
    its kind, or a custom row, says; a plan that disagrees is the round's error.
    """

    id: str
    title: str
    points: float
    plan: Callable[[Context], Plan]
    flavors: tuple[str, ...]
    needs: Need | None = None
    after: tuple[str, ...] = ()
    voids: tuple[str, ...] = ()
    void_message: str = ""
    rank: int = 1
    observed: Observed = "outside"
    measured: bool = False

    @property
    def part_id(self) -> str:
        return self.id.split(".", 1)[0]

    def applies(self, ctx: Context) -> bool:
        """Whether the check can apply on this machine, for this flavor and device."""
        if self.needs == "cuda":
            return ctx.cuda and ctx.flavor == "torch" and ctx.device != "cpu"
        return True
