"""Batch grading: many submissions, one pool of warm workers, one row per submission.

Every submission is staged (grader.coach.submissions), turned into a runner Request under the
instructor's settings (never the candidate's own grader.toml: a candidate must not be able to
change points, parts or the round), and graded by a WorkerPool. The flavor is the instructor's
when their grader.toml names one, else each submission's own. A submission whose grader.toml
declares another round, or another flavor than the instructor's pins, is not graded at all
(status "mismatch", the reason in its note): scored as the wrong one, correct numpy code would
read as a failed torch submission. A submission that cannot be staged still gets a full row: every
check of every enabled part reported as an error with the reason, scored by the same rule as a
graded part, so the scores, the JSON and the Gradescope file all keep one shape.

One submission cannot break another's row, or the batch's outputs: everything a row holds that
the submission controls is valid, bounded text from where it entered (grader/engine/safe_text.py:
its names and notes from grader.coach.submissions, its results from the worker's frames), the review
flags and a failed grading's message are taken the same way here, and what the code printed is
capped over each part of a row (results.bound_output).
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Literal, Protocol, TypedDict

from grader.coach.review import FlagDoc, scan_folder
from grader.coach.submissions import SharedFiles, Staged, expand, stage
from grader.engine.limits import DEFAULT_MEMORY_MB
from grader.engine.results import (
    SCHEMA_VERSION,
    CheckResult,
    PartDoc,
    PartResult,
    RunResult,
    Status,
    bound_output,
    scale_to_weight,
    undecided_note,
)
from grader.engine.safe_text import NAME_LIMIT, NOTE_LIMIT, received, received_name
from grader.engine.secret import Seeding
from grader.engine.workspace import EXERCISES_DIR, Settings
from grader.runner.pool import CheckDone, PartDone, PoolEvent, RequestDone, WorkerPool
from grader.runner.protocol import Request
from grader.runner.sandbox import ensure_usable

NOTE_WIDTH = 160
MAX_FLAGS = 100
"""Review flags listed per submission; a row with more says how many were left out."""
RowStatus = Literal["graded", "mismatch", "broken", "error"]
ROW_STATUSES: tuple[RowStatus, ...] = ("graded", "mismatch", "broken", "error")


class _GradedSubmissionDoc(TypedDict):
    path: str
    status: RowStatus
    flavor: str
    score: float
    max_score: float
    notes: list[str]
    parts: list[PartDoc]


class SubmissionDoc(_GradedSubmissionDoc, total=False):
    """One submission of `grade --json`. `flags`, wherever the review scan (grader/coach/review.py)
    read the submission's files, even when it found nothing; absent where the submission
    could not be staged. (NotRequired would not be seen here: this module's annotations are
    strings.)"""

    flags: list[FlagDoc]


class _SeededBatchDoc(TypedDict):
    schema_version: int
    round: str
    seed: int
    submissions: list[SubmissionDoc]


class BatchDoc(_SeededBatchDoc, total=False):
    """The whole `grade --json` document, which `grader report` reads back. `seed` is the seed
    given (or drawn): `grade --seed` with it grades every row again on the same inputs.
    `secret`: true only where an instructor's secret was mixed in; the inputs then came from a
    hidden seed that nothing shows (grader/engine/secret.py), and `--seed` reproduces them only with
    the same secret. `sandboxed`: every submission's code ran in a sandbox of its own (false
    under --no-sandbox; absent from documents written before there was a sandbox)."""

    secret: bool
    sandboxed: bool


@dataclass(frozen=True)
class GradingConfig:
    """How every submission of a batch is graded: the instructor's round and settings.

    `settings.flavor_given` False: each submission is graded in the flavor its own grader.toml
    names (the round's default flavor when it names none). `seed`: the seed given (or drawn),
    the only one reported; `seeding`: how the inputs follow from it (the instructor's secret;
    None: the inputs are drawn from `seed` itself). `sandbox`: each submission's code runs in a
    bubblewrap sandbox of its own (grader.runner.sandbox)."""

    settings: Settings
    seed: int
    timeout_s: float
    memory_mb: int = DEFAULT_MEMORY_MB
    cuda: bool = False
    seeding: Seeding | None = None
    sandbox: bool = True

    @property
    def inputs(self) -> Seeding:
        return self.seeding or Seeding(self.seed)

    def seeds(self) -> dict[str, int | bool]:
        """The seeds as `grade --json` and Gradescope's extra data report them."""
        return self.inputs.report()

    @property
    def round_id(self) -> str:
        return self.settings.round.id

    def for_flavor(self, flavor: str | None) -> Settings:
        """The settings a submission declaring `flavor` is graded under."""
        if self.settings.flavor_given or flavor not in self.settings.round.flavors:
            return self.settings
        return self.settings.with_flavor(flavor)

    @property
    def parts(self) -> list[str]:
        return list(self.settings.part_ids)

    @property
    def weights(self) -> dict[str, float]:
        return self.settings.weights()

    @property
    def columns(self) -> dict[str, float]:
        """Part id -> weight for every enabled part of the round in any flavor: the columns of
        a batch whose submissions may come in different flavors."""
        enabled = self.settings.enabled
        return {p.id: self.settings.weight(p) for p in self.settings.round.parts
                if enabled is None or p.id in enabled}

    @property
    def max_score(self) -> float:
        return sum(self.weights.values())

    def absent_parts(self, settings: Settings) -> list[PartResult]:
        """Where each submission chooses its flavor (the instructor named none), the parts
        its flavor lacks, each worth its points and scored 0: every row is out of the same
        total, so a flavor with fewer parts is no way to fewer points to earn."""
        if self.settings.flavor_given:
            return []
        have = set(settings.part_ids)
        return [PartResult(part_id, self.settings.round.part(part_id).title, [CheckResult(
            id=f"{part_id}.flavor", title=f"{part_id} in the {settings.flavor} flavor",
            status="failed", score=0.0, max_score=weight,
            message=f"{part_id} has no {settings.flavor} flavor: it counts as not handed in")])
            for part_id, weight in self.columns.items() if part_id not in have]

    def request(self, request_id: str, staged: Staged) -> Request:
        settings = self.for_flavor(staged.declared_flavor)
        return Request(
            id=request_id, root=str(staged.root), round=self.round_id, flavor=settings.flavor,
            parts=list(settings.part_ids), timeout_s=self.timeout_s,
            memory_mb=self.memory_mb, weights=settings.weights(), graded=True,
            **self.inputs.request_seeds(self.settings.round, Path(str(staged.root))),
        )


@dataclass
class GradedRow:
    """One submission's row: its parts (real results or stand-ins) and what to say about it."""

    path: str
    status: RowStatus
    parts: list[PartResult]
    max_score: float
    flavor: str
    notes: list[str] = field(default_factory=list)
    result: RunResult | None = None
    flags: list[FlagDoc] | None = None

    @property
    def score(self) -> float:
        return sum(p.score for p in self.parts)

    @property
    def note(self) -> str:
        return "; ".join(self.notes)

    def part(self, part_id: str) -> PartResult | None:
        return next((p for p in self.parts if p.id == part_id), None)

    def to_dict(self) -> SubmissionDoc:
        """The documented per-submission `grade --json` shape."""
        doc: SubmissionDoc = {
            "path": self.path,
            "status": self.status,
            "flavor": self.flavor,
            "score": round(self.score, 4),
            "max_score": round(self.max_score, 4),
            "notes": list(self.notes),
            "parts": [p.to_dict() for p in self.parts],
        }
        if self.flags is not None:
            doc["flags"] = list(self.flags)
        return doc


def batch_document(rows: Sequence[GradedRow], config: GradingConfig) -> BatchDoc:
    return {"schema_version": SCHEMA_VERSION, "round": config.round_id,
            **config.seeds(),  # type: ignore[typeddict-item]
            "sandboxed": config.sandbox, "submissions": [row.to_dict() for row in rows]}


def unrun_parts(config: GradingConfig, settings: Settings, message: str,
                finished: Sequence[PartResult] = (), status: Status = "error"
                ) -> list[PartResult]:
    """The parts of a row that stopped early: those in `finished` as they were graded, every
    check of the others with `status` (an error by default) carrying `message`, scored like a
    graded part would be."""
    from grader.checks.base import Context
    from grader.checks.table import checks_for

    done = {p.id: p for p in finished}
    parts = []
    for part in settings.parts:
        if part.id in done:
            parts.append(done[part.id])
            continue
        results = []
        for check in checks_for(settings.round, part.id, settings.flavor):
            ctx = Context(config.seed, settings.flavor, check.id, cuda=config.cuda)
            results.append(CheckResult(id=check.id, title=check.title, status=status,
                                       score=0.0, max_score=check.points if check.applies(ctx)
                                       else 0.0, message=message))
        scale_to_weight(results, settings.weight(part))
        parts.append(PartResult(part.id, part.title, results))
    return parts


def _first_line_of_trouble(part: PartResult) -> str | None:
    """Why a part scored low when something stopped it, in one line: what stopped it outright
    (an import error, a crash, a timeout at its first check), else its first check that timed
    out (the rest of the part was not run), as the cohort report's time-outs name it."""
    if not part.checks:
        return None
    first = part.checks[0]
    hung = next((c for c in part.checks if c.status == "timeout"), None)
    if first.status in ("error", "timeout") and not any(c.status == "passed"
                                                         for c in part.checks):
        said, message = part.id, first.message
    elif hung is not None:
        said, message = f"{part.id}: {hung.id} timed out", hung.message
    else:
        return None
    lines = [line.strip() for line in message.splitlines() if line.strip()]
    return f"{said}: {' '.join(lines[:2])}"[:NOTE_WIDTH] if lines else None


def mismatch(staged: Staged, config: GradingConfig) -> str | None:
    """Why a staged submission is for another round or flavor than it would be graded as, or
    None. Its grader.toml is the candidate's word on what the code is written for."""
    if staged.declared_round and staged.declared_round != config.round_id:
        return (f"not graded: its grader.toml is for round {staged.declared_round}, and this "
                f"batch grades {config.round_id}")
    declared, settings = staged.declared_flavor, config.settings
    if declared and declared not in settings.round.flavors:
        return (f"not graded: its grader.toml says flavor {declared}, which {config.round_id} "
                f"does not have ({', '.join(settings.round.flavors)})")
    if declared and settings.flavor_given and declared != settings.flavor:
        return (f"not graded: its grader.toml says {declared}, and the coach's settings pin "
                f"{settings.flavor} (their `flavor` line; without it each submission is graded "
                f"in its own flavor; or grade it alone with --flavor {declared})")
    return None


def graded_row(staged: Staged, config: GradingConfig, result: RunResult,
               flags: list[FlagDoc] | None = None) -> GradedRow:
    settings = config.for_flavor(staged.declared_flavor)
    notes = list(staged.notes)
    status: RowStatus = "graded"
    round_ = settings.round
    bound_output(result.parts)
    missing_parts = {p.id for p in result.parts if round_.part(p.id).file in staged.missing}
    notes += [line for p in result.parts if p.id not in missing_parts
              and (line := _first_line_of_trouble(p))]
    busy = undecided_note([c for p in result.parts for c in p.checks])
    if busy:
        notes.append(busy)
    absent = config.absent_parts(settings)
    return GradedRow(staged.source, status, [*result.parts, *absent],
                     sum(settings.weights().values()) + sum(p.max_score for p in absent),
                     settings.flavor, notes, result, flags)


def broken_row(path: str, config: GradingConfig, problem: str, status: RowStatus = "broken",
               finished: Sequence[PartResult] = (), flavor: str | None = None,
               flags: list[FlagDoc] | None = None, unrun: Status = "error") -> GradedRow:
    """A row for a submission that could not be staged, or whose grading the grader itself
    abandoned (then the parts that did finish keep their points, and its files were still
    scanned); the checks not run have status `unrun` (undecided where the machine ended the
    grading)."""
    settings = config.for_flavor(flavor)
    bound_output(list(finished))
    absent = config.absent_parts(settings)
    return GradedRow(path, status, [*unrun_parts(config, settings, problem, finished, unrun),
                                    *absent],
                     sum(settings.weights().values()) + sum(p.max_score for p in absent),
                     settings.flavor, [problem], flags=flags)


def review_flags(folder: Path) -> tuple[list[FlagDoc] | None, str | None]:
    """The review scan's flags of a staged exercises/ folder, their text valid and bounded
    (they name the submission's files and quote its code), at most MAX_FLAGS of them; and a
    note where some were left out, or where the scan itself failed on these files (then no
    flags: the files were not read)."""
    try:
        found = scan_folder(folder)
    except Exception as exc:  # noqa: BLE001 - one submission's files must not stop the batch
        return None, received(f"could not be scanned for review: {type(exc).__name__}: {exc}",
                              NOTE_LIMIT, inline=True)
    flags = [_received_flag(flag) for flag in found[:MAX_FLAGS]]
    more = len(found) - len(flags)
    note = f"{more} more review flags not listed (the first {MAX_FLAGS} are)" if more else None
    return flags, note


def _received_flag(flag: FlagDoc) -> FlagDoc:
    """A flag with its file's name and its other text (the construct quotes their code) valid
    and bounded."""
    taken = dict(flag)
    for key, value in taken.items():
        if isinstance(value, str):
            taken[key] = received_name(value) if key == "file" else \
                received(value, NAME_LIMIT, inline=True)
    return taken  # type: ignore[return-value]


class BatchListener:
    """What a batch reports while it runs; the defaults ignore everything."""

    def started(self, paths: Sequence[str]) -> None:
        """The submissions, in row order, before any is graded."""

    def check_done(self, index: int, part_id: str, check: CheckResult) -> None:
        """One check of submission `index` has a result."""

    def part_done(self, index: int, part: PartResult) -> None:
        """Every check of one part of submission `index` has a result."""

    def finished(self, index: int, row: GradedRow) -> None:
        """Submission `index` has its final row."""


class Fanout(BatchListener):
    """Several listeners at once (a progress bar and a Gradescope file)."""

    def __init__(self, *listeners: BatchListener) -> None:
        self.listeners = listeners

    def started(self, paths: Sequence[str]) -> None:
        for listener in self.listeners:
            listener.started(paths)

    def check_done(self, index: int, part_id: str, check: CheckResult) -> None:
        for listener in self.listeners:
            listener.check_done(index, part_id, check)

    def part_done(self, index: int, part: PartResult) -> None:
        for listener in self.listeners:
            listener.part_done(index, part)

    def finished(self, index: int, row: GradedRow) -> None:
        for listener in self.listeners:
            listener.finished(index, row)


class Graders(Protocol):
    """Where a batch's requests are graded: this machine's pool of warm workers
    (grader.runner.pool.WorkerPool) or a Dask cluster's (grader.coach.cluster). Everything else
    of a batch (staging, review flags, the rows, the outputs) is the same for both."""

    def cuda(self) -> bool:
        """Whether the code is graded where CUDA is seen (a broken row is scored as if so)."""

    def grade(self, requests: Iterable[Request]) -> Iterator[PoolEvent]:
        """Grade every request; its events as they happen, ending after the last RequestDone."""

    def __enter__(self) -> Graders: ...

    def __exit__(self, *exc: object) -> None: ...


StartGraders = Callable[[int], Graders]
"""Makes the graders of a batch of this many requests to grade (maybe none)."""


def local_graders(jobs: int, sandbox: bool) -> StartGraders:
    """`jobs` warm workers on this machine (fewer for a smaller batch). With `sandbox`:
    SandboxError where there is something to grade and no sandbox can be made here."""
    def start(count: int) -> Graders:
        if count and sandbox:
            ensure_usable()
        return WorkerPool(max(1, min(jobs, count or 1)), sandbox=sandbox)
    return start


def grade_submissions(sources: Sequence[Path], config: GradingConfig, jobs: int = 2,
                      listener: BatchListener | None = None,
                      expand_folders: bool = True,
                      graders: StartGraders | None = None) -> list[GradedRow]:
    """Grade every submission (a folder of submissions counts as its entries when
    `expand_folders`), `jobs` at a time on this machine unless `graders` says where; rows
    come back in the order given.

    The rows of submissions that cannot be staged are made once the pool is up, so they are
    scored with the same knowledge of the machine (is there CUDA?) as the graded rows. Every
    staged submission's files are scanned for review (grader/coach/review.py) before grading starts;
    the flags go on its row and change no score. With config.sandbox: SandboxError where there
    is something to grade and no sandbox can be made here."""
    # What makes the row of a grading cut short (unrun_parts: the round's checks) is loaded
    # now, while files can be opened: a submission that fills the machine's table of open
    # files for a moment (as an ordinary user, the grader gets no file past it) must not cost
    # every row of the batch.
    from grader.checks.table import round_checks

    round_checks(config.settings.round)
    listener = listener or BatchListener()
    round_ = config.settings.round
    paths = [p for s in sources for p in (expand(s, round_) if expand_folders else [s])]
    listener.started([received_name(p) for p in paths])
    rows: dict[int, GradedRow] = {}
    with tempfile.TemporaryDirectory(prefix="grader-batch-") as tmp:
        shared = SharedFiles.among(paths)
        staged = [stage(path, Path(tmp) / str(i), round_, shared)
                  for i, path in enumerate(paths)]
        flags: dict[int, list[FlagDoc] | None] = {}
        for i, item in enumerate(staged):
            if item.root:
                flags[i], note = review_flags(item.root / EXERCISES_DIR)
                staged[i] = replace(item, notes=(*item.notes, note)) if note else item
        refused = {i: why for i, item in enumerate(staged)
                   if item.root and (why := mismatch(item, config))}
        requests = {f"submission-{i}": i for i, item in enumerate(staged)
                    if item.root and i not in refused}
        finished: dict[int, list[PartResult]] = {}
        # Nothing to grade needs no cluster: the broken rows are made here all the same.
        start = graders if graders and requests else local_graders(jobs, config.sandbox)
        with start(len(requests)) as pool:
            config = replace(config, cuda=pool.cuda()) if requests else config
            for index, item in enumerate(staged):
                if item.root is None:
                    rows[index] = broken_row(item.source, config, item.problem or "cannot grade")
                    listener.finished(index, rows[index])
                elif index in refused:
                    rows[index] = broken_row(item.source, config, refused[index], "mismatch",
                                             flags=flags[index])
                    listener.finished(index, rows[index])

            def row_of(index: int, done: RequestDone) -> GradedRow:
                item = staged[index]
                if done.result is not None:
                    return graded_row(item, config, done.result, flags[index])
                return broken_row(item.source, config,
                                  received(done.error or "grader error", NOTE_LIMIT,
                                           inline=True),
                                  "error", finished.get(index, ()), item.declared_flavor,
                                  flags[index], "undecided" if done.by_the_machine else "error")

            batch = [config.request(rid, staged[i]) for rid, i in requests.items()]
            for event in pool.grade(batch):
                index = requests[event.request_id]
                if isinstance(event, CheckDone):
                    listener.check_done(index, event.part_id, event.check)
                elif isinstance(event, PartDone):
                    finished.setdefault(index, []).append(event.part)
                    listener.part_done(index, event.part)
                elif isinstance(event, RequestDone):
                    rows[index] = row_of(index, event)
                    listener.finished(index, rows[index])
            for index in [i for i in requests.values() if left_open(rows[i]) > (False, 0)]:
                # Cut short by the machine (a classmate's load, or another program's) or given
                # up by the grader (which a classmate can bring about too: a sandbox the machine
                # could not start in words no rule knows): graded again once the rest of the
                # batch is done, alone, and kept where the first grading left more open.
                finished.pop(index, None)
                again: RequestDone | None = None
                asked = config.request(f"submission-{index}-again", staged[index])
                for event in pool.grade([asked]):
                    if isinstance(event, PartDone):
                        finished.setdefault(index, []).append(event.part)
                    elif isinstance(event, RequestDone):
                        again = event
                row = row_of(index, again) if again else rows[index]
                if left_open(row) < left_open(rows[index]):
                    rows[index] = replace(row, notes=[*row.notes, GRADED_AGAIN])
                    listener.finished(index, rows[index])
    return [rows[i] for i in range(len(paths))]


GRADED_AGAIN = ("graded again, alone, after the rest of the batch: its first grading was left "
                "unfinished (checks the machine left undecided, or a grading the grader gave up)")


def left_open(row: GradedRow) -> tuple[bool, int]:
    """What a row's grading left open, least first: whether the grader gave it up (the row's
    status "error": a worker that died, a sandbox that could not start), then how many of its
    checks the machine left undecided."""
    return row.status == "error", undecided_in(row)


def undecided_in(row: GradedRow) -> int:
    """How many of a row's checks the machine left undecided."""
    return sum(c.status == "undecided" for p in row.parts for c in p.checks)
