"""The generic check kinds: what a round's checks.toml configures.

Each kind reads its row of the check table through a `Spec` (so a typo or a missing key is an
error naming the file and the check) and returns the check's `plan(ctx) -> Plan`: the probe to run
beside candidate code (a generic one from grader.probes.library), its arguments as plain data,
and the judge that decides. A round configures what function is called, on which inputs, against
which truth, within which tolerance, and which known mistakes to look for; checks that really are
special are `kind = "custom"` rows naming a plan function of the round's checks.py.
"""

from __future__ import annotations

import inspect
import math
import re
import tomllib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from functools import cache, partial
from pathlib import Path
from types import ModuleType
from typing import Any, Literal, cast

import numpy as np

from grader.checks import mutants, symptoms
from grader.checks.base import (
    Context,
    Diagnosis,
    Measured,
    Plan,
    Recheck,
    Verdict,
    failed,
    not_started,
    passed,
    skipped,
    undecided,
)
from grader.checks.cases import Case, span
from grader.checks.compare import find_mismatch, tree_difference, tree_matches
from grader.checks.growth import CEILING, FLOOR, FLOOR_SHARE, Growth, Timings, compare
from grader.checks.mistakes import Mistake, diagnose
from grader.checks.settle import DECIDING_ROUNDS, settled, spread_out
from grader.checks.signatures import changed_defaults
from grader.engine.prose import error_topic
from grader.engine.rounds import Round, RoundError
from grader.probes.library import unchanged

PlanFactory = Callable[[Context], Plan]
Observation = dict[str, Any]

VALIDATION_HINT = (
    "Check shapes first and raise ValueError yourself; an IndexError or a matmul RuntimeError "
    "from deeper in the code is an accident, not validation."
)
WRONG_GRADIENT_HINT = (
    "If the forward values are right but the gradient is not, part of the computation went "
    "around autograd (.data, detach, numpy)."
)
GRADCHECK_HINT = (
    "gradcheck compares your backward's Jacobian with finite differences of the forward; "
    "'Jacobian mismatch' means the two disagree. The correctness check shows which entries."
)
UPSTREAM_HINT = (
    "A backward must not write into the gradient it receives (grad_output): compute a new "
    "tensor from it. Written in place, it changes the caller's G, and from out.sum().backward() "
    "it is one expanded tensor that cannot be written at all."
)
FINITE_DIFFERENCES_HINT = (
    "Finite differences do not lie: nudge that one entry of {wrt} by hand and watch the loss; "
    "then compare with your formula. (`grader hint {part}`)"
)
VALID_INPUT_HINT = ("This input is valid: it must not raise. The line above is where your "
                    "code failed.")
REQUIRED = object()


class Spec:
    """One row of checks.toml, read key by key; `finish` rejects the keys nobody read.

    `signature_flavors`: the flavors in which this row (a correctness row) also judges its
    function's signature against the reference's (table._signature_rows). `value_cases`: for a
    row that watches a function's calls for a property, the case maker and the id of the
    correctness row that calls it the same way (table._value_case_rows): its property is
    watched on such inputs too, so that code cannot keep it only on inputs of the watching
    row's own (a dtype cast back only at the one shape a dtype check uses), and the ids of
    every correctness row calling it so, on whose own calls its property is judged too
    (`value_checks`, Plan.borrows), which no code can tell apart. `malformed`: for a
    correctness row, the case maker of the validation row calling its function alike and the
    error it expects (table._malformed_rows), which a repair must still reject."""

    def __init__(self, table: dict[str, Any], where: str, round_: Round, judge: ModuleType,
                 helpers: ModuleType, mistakes: Callable[[Any, str], tuple[Mistake, ...]],
                 defaults: dict[str, Any] | None = None,
                 signature_flavors: frozenset[str] = frozenset(),
                 value_cases: tuple[str, tuple[str, ...]] | None = None,
                 malformed: tuple[str, str] | None = None) -> None:
        self.table = dict(table)
        self.signature_flavors = signature_flavors
        self.value_cases: str | None = value_cases[0] if value_cases else None
        self.value_checks: tuple[str, ...] = value_cases[1] if value_cases else ()
        self.malformed = malformed
        self.defaults = defaults or {}
        self.where = where
        self.round = round_
        self.judge = judge
        self.helpers = helpers
        self._mistakes = mistakes
        self._read: set[str] = set()

    def _get(self, key: str, default: Any) -> Any:
        self._read.add(key)
        if key in self.table:
            return self.table[key]
        if key in self.defaults:
            return self.defaults[key]
        if default is REQUIRED:
            raise RoundError(f"{self.where}: missing {key}")
        return default

    def text(self, key: str, default: Any = REQUIRED) -> Any:
        value = self._get(key, default)
        if value is not None and not isinstance(value, str):
            raise RoundError(f"{self.where}: {key} must be a string")
        return value

    def number(self, key: str, default: Any = REQUIRED) -> float:
        value = self._get(key, default)
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise RoundError(f"{self.where}: {key} must be a number")
        return float(value)

    def flag(self, key: str, default: bool = False) -> bool:
        value = self._get(key, default)
        if not isinstance(value, bool):
            raise RoundError(f"{self.where}: {key} must be true or false")
        return value

    def names(self, key: str, default: Sequence[str] = ()) -> list[str]:
        value = self._get(key, list(default))
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise RoundError(f"{self.where}: {key} must be a list of strings")
        return list(value)

    def maker(self, key: str, default: Any = REQUIRED) -> Any:
        """A function of the round's checks.py, named by `key`."""
        name = self.text(key, default)
        if name is None:
            return None
        found = getattr(self.judge, name, None)
        if not callable(found):
            raise RoundError(f"{self.where}: {key} = {name!r}: checks.py has no such function")
        return found

    def case_maker(self) -> Any:
        """The input maker under `cases` (a list of cases), or `case` (one)."""
        return self.maker("cases") if "cases" in self.table else self.maker("case")

    def watched_cases(self) -> Callable[[np.random.Generator], list[Case]]:
        """The input maker of a row that watches a function's calls for a property: its own
        cases (`cases` or `case`), then as many as the correctness row calling the function
        the same way makes (value_cases), drawn afresh."""
        own = self.case_maker()
        extra = getattr(self.judge, self.value_cases) if self.value_cases else None

        def both(rng: np.random.Generator) -> list[Case]:
            return listed(own(rng)) + (listed(extra(rng)) if extra is not None else [])

        return both

    def helper(self, key: str) -> str | None:
        """A function of the round's probes.py, named by `key` (passed to the probe by name)."""
        name = self.text(key, None)
        if name is not None and not callable(getattr(self.helpers, name, None)):
            raise RoundError(f"{self.where}: {key} = {name!r}: probes.py has no such function")
        return None if name is None else str(name)

    def mistakes(self, key: str = "mistakes") -> tuple[Mistake, ...]:
        return self._mistakes(self._get(key, []), self.where)

    def call(self) -> dict[str, Any]:
        """How one call is made: the candidate's function on inputs `args`, or helpers."""
        config = {"function": self.text("function", None), "args": self.names("args"),
                  "call": self.helper("call"), "read": self.helper("read"),
                  "run": self.helper("run"), "returns": self.text("returns", "array")}
        if config["returns"] not in ("array", "tree"):
            raise RoundError(f"{self.where}: returns must be \"array\" or \"tree\"")
        if config["function"] is None and config["run"] is None:
            raise RoundError(f"{self.where}: needs a function (or a run helper)")
        return config

    def value(self, key: str, default: Any = REQUIRED) -> Any:
        """A value of any TOML type (a table of stages, a tolerance pair, a list of ideas)."""
        return self._get(key, default)

    def rest(self) -> dict[str, Any]:
        """Every key not read yet (a custom check's parameters), over the table's defaults."""
        rest = {k: v for k, v in self.table.items() if k not in self._read}
        self._read |= set(rest)
        return {**self.defaults, **rest}

    def finish(self) -> None:
        unknown = sorted(set(self.table) - self._read)
        if unknown:
            raise RoundError(f"{self.where}: unknown key(s) {', '.join(unknown)}")


# --- shared pieces of judging -------------------------------------------------------------------


def format_raised(raised: dict[str, Any]) -> str:
    where = f"\n  at {raised['where']}" if raised.get("where") else ""
    return f"{raised['type']}: {raised['message']}{where}"


OWN_RAISE_HINT = ("Valid input must not raise, and this {type} is your own: the check before "
                  "`raise` at {line} rejected input the contract allows. Work out what it "
                  "computes for the input above (each size or value it compares) against "
                  "what it should be.")


def own_raise_hint(raised: dict[str, Any]) -> str | None:
    """The hint for valid input rejected by the candidate's own `raise` statement (a guard
    whose condition is wrong), where the recipe would guess at a cause, or for an exception
    whose message names the slip (known_error_hint); None for any other exception."""
    if not _raised_by_a_raise(raised):
        return known_error_hint(raised)
    line, _ = mutants.raise_site(str(raised.get("where", "")))
    return OWN_RAISE_HINT.format(type=raised["type"], line=line)


def _raised_by_a_raise(raised: dict[str, Any]) -> bool:
    """Whether the candidate's own `raise` statement raised it (not a library call, nor an
    operation of theirs that broke)."""
    _, statement = mutants.raise_site(str(raised.get("where", "")))
    return statement.split(maxsplit=1)[:1] == ["raise"]


ERRORS_FILE = Path(__file__).with_name("errors.toml")


@cache
def _known_errors() -> tuple[tuple[re.Pattern[str], str], ...]:
    """errors.toml's entries, compiled once."""
    table = tomllib.loads(ERRORS_FILE.read_text())
    return tuple((re.compile(entry["matches"]), entry["hint"]) for entry in table["error"])


def known_error_hint(raised: dict[str, Any]) -> str | None:
    """The hint errors.toml gives for an exception whose message names the slip (a thread the
    process may not start, a float index, a dtype clash, a context manager never called);
    None for any other."""
    said = f"{raised.get('type', '')}: {raised.get('message', '')}"
    return next((hint for pattern, hint in _known_errors() if pattern.search(said)), None)


def raised_verdict(where: str, raised: dict[str, Any], hint: str | None = None) -> Verdict:
    """The verdict for candidate code that raised where it should have returned, with a hint
    always: the known error's, else `hint`, else that the input was valid and where the code
    failed (a failure without a word of why is no help)."""
    return failed(f"{where}: raised {format_raised(raised)}",
                  hint=known_error_hint(raised) or hint or VALID_INPUT_HINT)


def first_line(message: str, limit: int = 300) -> str:
    line = message.strip().splitlines()[0] if message.strip() else ""
    return line if len(line) <= limit else line[:limit] + " ..."


WATCHED_ANSWERS_HINT = ("What a check watches (a count, the memory, the inputs, the types) is "
                        "judged on calls whose answers are checked like every other call's: "
                        "where the checks of values fail, fix those first; where they pass, "
                        "your code answers the watched calls some other way than the rest. "
                        "Compute every result from its inputs, the same way in every call.")


def answers_baseline(spec: Spec, ctx: Context, probe: str, args: dict[str, Any],
                     key: str = "answer") -> tuple[str, dict[str, Any]] | None:
    """The baseline of a check that watches calls for something other than their values: the
    same probe on the same cases with the reference (probes.library.reference_twice), whose
    answers (each row's `key`) the candidate's must match. None with `answers = false`: a
    function whose right answers are many (a random initialisation), where no one answer can
    be held to."""
    if not spec.flag("answers", True):
        return None
    return "reference_twice", {"probe": probe, "args": args, "key": key,
                               "reference": [str(spec.round.folder), ctx.part_id]}


KeptJudge = Callable[[str, Observation], Verdict | None]
"""A watching check's judge of one call of the check of values it borrows (Plan.borrows): the
call's case label and what the call kept (probes.library._kept_properties); None where the
property held."""


def with_answers(judge: Callable[[Any], Verdict], cases: Sequence[Case], name: str,
                 key: str = "answer", plain: dict[str, Any] | None = None,
                 kept: KeptJudge | None = None) -> Callable[[Any], Verdict]:
    """A watching check's judge (`judge`, of the candidate's rows alone), then, where it
    passes, the property in each call the check of values made (`kept`, where the plan
    borrows that check's calls), then every watched call's answer (each row's `key`) against
    the reference's on the same case; a check without the baseline (see answers_baseline)
    gets its rows alone. `plain`: how call_each makes the same call as the checks of the
    values make it (its arguments but the cases), for the Recheck of a watched call that
    answered wrong; None where no plain call is the same (a run helper's several calls)."""
    def judged(obs: Any) -> Verdict:
        if not (isinstance(obs, dict) and "yours" in obs):
            return judge(obs)
        verdict = judge(obs["yours"])
        if verdict.status != "passed":
            return verdict
        if kept is not None:
            for label, call in obs.get("kept") or ():
                broken = kept(label, call) if isinstance(call, dict) else None
                if broken is not None:
                    return broken
        if obs["baseline"] is None:
            return verdict
        wrong: list[tuple[Case, Any, str]] = []
        for case, mine, theirs in zip(cases, obs["yours"], obs["baseline"], strict=False):
            expected = theirs.get(key)
            if expected is None or mine.get("raised"):
                continue
            differs = tree_difference(*_in_one_form(mine.get(key), expected), case.dtype, name,
                                      alike=True)
            if differs is not None:
                wrong.append((case, mine.get(key), differs))
        if not wrong:
            return verdict
        case, _, differs = wrong[0]
        return replace(failed(
            f"{case.describe()}: a call this check watched answered otherwise than the "
            f"reference on the same inputs ({differs}), so what it saw is not what the "
            "work does", hint=WATCHED_ANSWERS_HINT), by_values=True, otherwise=verdict,
            recheck=None if plain is None else _recheck_answers(
                plain, [(case, watched) for case, watched, _ in wrong], name))

    return judged


LATER_CALL = " by a later call, after this one had returned"
"""Said of inputs a call left as they were and a later call wrote (a caller's array cleared
at the next call)."""
IN_A_VALUES_CALL = ", in a call the check of values made"
"""Said of a property found broken in a call of the check of values (Plan.borrows)."""


def _recheck_answers(plain: dict[str, Any], watched: list[tuple[Case, Any]],
                     name: str) -> Recheck:
    """The Recheck of the watched calls that answered otherwise than the reference (each case
    and its answer): call_each on the same inputs (`plain`, see with_answers), each answer
    held to its watched one within the tolerance of its case's dtype."""
    def same(case: Case, row: Observation, answer: Any) -> bool:
        return "value" in row and tree_difference(*_in_one_form(row["value"], answer),
                                                  case.dtype, name, alike=True) is None

    return _recheck("call_each", plain, watched, same)


def _recheck(probe: str, args: dict[str, Any], watched: list[tuple[Case, Any]],
             same: Callable[[Case, Observation, Any], bool]) -> Recheck:
    """A Recheck running `probe` with `args` on the watched cases, alike where every row is a
    plain call's that returned and answered as `same` finds its watched call did."""
    def alike(rows: Any) -> bool:
        return isinstance(rows, list) and len(rows) == len(watched) and all(
            isinstance(row, dict) and not row.get("raised") and same(case, row, answer)
            for (case, answer), row in zip(watched, rows, strict=True))

    return Recheck(probe, {**args, "cases": [case.data() for case, _ in watched]}, alike)


def _in_one_form(mine: Any, theirs: Any) -> tuple[Any, Any]:
    """Two readings of one answer in the same form, where their forms differ only as the
    contract allows: a number and a 0-d array, a list of numbers or arrays and the array they
    stack into, are one answer."""
    if isinstance(mine, dict) and isinstance(theirs, dict):
        keyed = {k: _in_one_form(mine[k], theirs[k]) for k in theirs if k in mine}
        return ({**mine, **{k: a for k, (a, _) in keyed.items()}},
                {**theirs, **{k: b for k, (_, b) in keyed.items()}})
    if isinstance(mine, list) and isinstance(theirs, list) and len(mine) == len(theirs):
        pairs = [_in_one_form(a, b) for a, b in zip(mine, theirs, strict=True)]
        return [a for a, _ in pairs], [b for _, b in pairs]
    return _as_array(mine), _as_array(theirs)


def _as_array(reading: Any) -> Any:
    """A number, or a list that stacks into one array, as that array; else the reading."""
    if isinstance(reading, float | int) or isinstance(reading, list) and reading and all(
            isinstance(x, float | int | np.ndarray) for x in reading):
        try:
            return np.asarray(reading, dtype=np.float64)
        except ValueError:  # arrays of several shapes stack into no one array
            return reading
    return reading


def _cases(maker: Callable[[np.random.Generator], Any], ctx: Context) -> list[Case]:
    return listed(maker(ctx.rng()))


def listed(made: Any) -> list[Case]:
    """What a case maker made (one case, or a list or tuple of them), as a list."""
    return list(made) if isinstance(made, list | tuple) else [made]


# --- validation ---------------------------------------------------------------------------------


def validation(spec: Spec) -> PlanFactory:
    """Malformed inputs must raise the expected error (ValueError); with `valid` (a maker of
    well-formed inputs: one case, or a list, the contract's edges among them, such as a
    momentum of exactly 0 or 1 or a batch of size 0), none of those may raise: code that
    rejects every input validates nothing, and a bound drawn one step too tight (`<=` for `<`)
    rejects the edge the contract allows."""
    function, maker = spec.text("function"), spec.maker("cases")
    call, args = spec.helper("call"), spec.names("args")
    hint, error = spec.text("hint", VALIDATION_HINT), spec.text("error", "ValueError")
    valid = spec.maker("valid", None)

    def judge_with(ctx: Context, malformed_cases: list[Case], valid_cases: list[Case]
                   ) -> Callable[[list[Observation]], Verdict]:
        count = len(valid_cases)
        replayed = {**PLAIN_CALL, "function": function, "call": call, "args": args}

        def fixing(first: Case) -> Diagnosis | None:
            """No slip of the reference's validation to run (none is made there): the one
            change to the candidate's own file that makes it reject what it should."""
            fix = mutants.validation_repair(spec.round, ctx.part_id, ctx.flavor, replayed, first,
                                            malformed_cases, valid_cases, f"{function}()",
                                            ctx.workspace, error)
            return None if fix is None else Diagnosis(
                "mutant_calls", (), ("sources", "cases"), lambda observations: None,
                repair=fix)

        def judge(rows: list[Observation]) -> Verdict:
            malformed, accepted = rows[:len(rows) - count], rows[len(rows) - count:]
            for case, row in zip(malformed_cases, malformed, strict=True):
                raised = row["raised"]
                if raised is None:
                    return replace(failed(f"{row['case']}: returned normally; expected {error}",
                                          hint=hint), diagnosis=fixing(case))
                if error not in raised["bases"]:
                    return replace(failed(f"{row['case']}: raised {format_raised(raised)}; "
                                          f"expected {error}",
                                          hint=f"{wrong_error(raised, error)} {hint}".strip()),
                                   diagnosis=fixing(case))
            rejected = [(case, row) for case, row in zip(valid_cases, accepted, strict=True)
                        if row["raised"] is not None]
            if rejected:
                case, row = rejected[0]
                # Every well-formed input refused with the validation's own error, of several,
                # is a check that rejects everything; one input alone cannot say so, and any
                # other exception is code that broke on them.
                refused_all = len(rejected) == count > 1 and all(
                    _raised_by_a_raise(r["raised"]) for _, r in rejected)
                why = ("rejecting every input validates nothing, and this well-formed one"
                       if refused_all else "this input is well-formed, and it")
                verdict = failed(f"{row['case']}: {why} raised {format_raised(row['raised'])}",
                                 hint=own_raise_hint(row["raised"]) or VALID_INPUT_HINT)
                # The reference's slips that reject this input as the candidate's code does
                # (a bound one step too tight, a condition left out) name the one made; else
                # the one change to the candidate's file that accepts it.
                slips = mutants.diagnosis(spec.round, ctx.part_id, ctx.flavor, replayed,
                                          [(case, None)], f"{function}()", row["raised"],
                                          ctx.workspace)
                fix = fixing(case)
                return replace(verdict, diagnosis=fix if slips is None else replace(
                    slips, repair=slips.repair or (fix.repair if fix else None)))
            return passed(f"{error} for all {len(malformed)} malformed inputs"
                          + (f", and none for {_well_formed(count)}" if count else ""))

        return judge

    def plan(ctx: Context) -> Plan:
        accepted = _cases(valid, ctx) if valid else []
        malformed = _cases(maker, ctx)
        return Plan("raises_each", {"function": function, "call": call, "args": args,
                                    "cases": [c.data() for c in malformed + accepted]},
                    judge_with(ctx, malformed, accepted))

    return plan


PLAIN_CALL = {"read": None, "run": None, "returns": "nothing"}
"""How a validation's call is read, for the mutants that replay it: only what it raises."""


OWN_WRONG_ERROR = ("Your `raise` at {line} raises {type}, and the contract asks for {error}: "
                   "a caller catching {error} would miss it.")
BROKE_ON_ERROR = ("That {type} is no check of yours: `{code}` at {line} broke on the "
                  "malformed input before any check rejected it. Reject the input yourself "
                  "before that line, or catch the {type} there and raise {error} from it.")


def wrong_error(raised: dict[str, Any], error: str) -> str:
    """What a malformed input's exception of the wrong type was: the candidate's own `raise`
    of another type, or a library's exception let through (torch.broadcast_shapes' RuntimeError
    where the contract asks for ValueError, an IndexError of an index read before the shapes
    were checked); "" where the code names no line."""
    line, code = mutants.raise_site(str(raised.get("where", "")))
    if not line:
        return ""
    said = OWN_WRONG_ERROR if _raised_by_a_raise(raised) else BROKE_ON_ERROR
    return said.format(line=line, code=code, type=raised["type"], error=error)


def _well_formed(count: int) -> str:
    return "a well-formed one" if count == 1 else f"{count} well-formed ones"


# --- correctness over many cases, with the mistake named ----------------------------------------


def _wrong(cases: Sequence[Case], observed: Sequence[Observation],
           truth: Callable[[Case], Any]) -> list[tuple[Case, Any]]:
    """Every (case, result) that came back with the right shape but wrong values."""
    wrong = []
    for case, obs in zip(cases, observed, strict=False):
        if obs["raised"] is not None:
            break
        expected = truth(case)
        shapes_agree = np.shape(obs["value"]) == np.shape(expected) if isinstance(
            expected, np.ndarray) else True
        if shapes_agree and not tree_matches(obs["value"], expected, case.dtype):
            wrong.append((case, obs["value"]))
    return wrong


Differential = Callable[[Sequence[tuple[Case, Any]], dict[str, Any] | None,
                        Sequence[tuple[Case, Any]]], Diagnosis | None]
"""Given the wrong (case, result) pairs no known mistake explained, or the one case whose valid
input made the candidate's code raise and what it raised, and the code's other cases (each with
its result, None where it raised), how to look for the slip among the reference's mutants
(grader.checks.mutants.diagnosis)."""


def judge_cases(ctx: Context, cases: Sequence[Case], observed: Sequence[Observation],
                truth: Callable[[Case], Any], name: str, mistakes: Sequence[Mistake],
                hint: str, raise_hint: str, shape_hint: str | None,
                stages: dict[str, dict[str, str]] | None = None,
                differential: Differential | None = None) -> Verdict:
    """Pass when every case matches the truth; else the first bad case's evidence, and the hint
    of the known mistake that explains the wrong results, or, where none does, the
    differential diagnosis to run (the runner then names the slip if a mutant of the reference
    reproduces them)."""
    truth = _once_per_case(truth)
    for case, obs in zip(cases, observed, strict=False):
        if obs["raised"] is not None:
            stage = (stages or {}).get(obs.get("stage", ""))
            verdict = failed(f"{case.describe()}: raised {format_raised(obs['raised'])}",
                             hint=own_raise_hint(obs["raised"]) or raise_hint)
            if stage:
                return failed(stage["prefix"] + verdict.message, hint=stage["hint"])
            if differential is not None:
                # The cases answered before it, right or wrong, tell apart slips that raise
                # alike here: a mutant must answer them as the candidate did.
                answered = mutants.chosen_cases([
                    (c, o["value"]) for c, o in zip(cases, observed, strict=False)
                    if o["raised"] is None])
                # The cases after it never ran (a probe stops at a raise): like those that
                # raised, a change that fixes the code must answer them right.
                raised_too = [(c, None) for c, o in zip(cases, observed, strict=False)
                              if o["raised"] is not None and c is not case]
                raised_too += [(c, None) for c in cases[len(observed):]]
                return replace(verdict, diagnosis=differential([(case, None), *answered],
                                                               obs["raised"], raised_too))
            return verdict
        expected = truth(case)
        actual = obs["value"]
        if isinstance(expected, np.ndarray) and np.shape(actual) != expected.shape:
            reshaped = [(c, o["value"], truth(c)) for c, o in zip(cases, observed, strict=False)
                        if o["raised"] is None and _other_shape(o["value"], truth(c))]
            verdict = failed(f"{case.describe()}: returned shape {tuple(np.shape(actual))}, "
                             f"expected {tuple(expected.shape)} ({ctx.reproduce()})",
                             hint=_reshaped_hint(reshaped, name, shape_hint))
            if differential is None:
                return verdict
            return replace(verdict, diagnosis=differential([(case, actual)], None, ()))
        difference = tree_difference(actual, expected, case.dtype, name)
        if difference is not None:
            wrong = _wrong(cases, observed, truth)
            named = diagnose(wrong, mistakes)
            verdict = failed(f"{case.describe()}: {difference} ({ctx.reproduce()})",
                             hint=named or _known(cases, observed, wrong, truth, name, hint))
            # The cases the code answers right: a slip that explains the wrong ones must
            # answer those as the code does too.
            elsewhere = [(c, o["value"]) for c, o in zip(cases, observed, strict=False)
                         if o["raised"] is None and all(c is not w for w, _ in wrong)]
            second = differential(wrong, None, elsewhere) if differential is not None else None
            if second is not None and named is not None:
                second = replace(second, keep_hint=True)
            return replace(verdict, diagnosis=second)
    changed = [case for case, obs in zip(cases, observed, strict=False)
               if obs.get("changed_later")]
    if changed:
        return failed(f"{changed[0].describe()}: what the call returned changed when a later "
                      f"call ran ({ctx.reproduce()})", hint=KEPT_RESULT_HINT)
    return passed(f"{len(cases)} cases matched ({span(cases)})")


KEPT_RESULT_HINT = ("Your function hands back memory it writes again on a later call (an array, "
                    "list or dict kept at module level, or one result buffer reused): a caller "
                    "who keeps one call's result while making the next reads the next call's "
                    "numbers. Make each call's result new memory.")


def _once_per_case(truth: Callable[[Case], Any]) -> Callable[[Case], Any]:
    """`truth`, computed once per case: a failing verdict asks for a case's truth again to
    list the wrong cases and to describe them, and a truth can cost a reference's autograd."""
    known: dict[int, Any] = {}

    def once(case: Case) -> Any:
        if id(case) not in known:
            known[id(case)] = truth(case)
        return known[id(case)]

    return once


def _known(cases: Sequence[Case], observed: Sequence[Observation],
           wrong: Sequence[tuple[Case, Any]], truth: Callable[[Case], Any], name: str,
           recipe: str) -> str:
    """The hint when no known mistake explains the wrong results: what holds of them (the
    first one compared with its truth, and which cases came out wrong), then the recipe, which
    always ends it."""
    facts = []
    if wrong:
        case, actual = wrong[0]
        others = [(a, truth(c), c.dims) for c, a in wrong[1:4]]
        facts.append(symptoms.describe(actual, truth(case), case.dtype, name, case.dims,
                                       others))
    ran = [(c, o) for c, o in zip(cases, observed, strict=False) if o["raised"] is None]
    bad = {id(c) for c, _ in wrong}
    facts.append(symptoms.where_wrong([c for c, _ in ran], [id(c) not in bad for c, _ in ran]))
    known = " ".join(_sentence(f) for f in facts if f)
    return f"What holds: {known} {recipe}".strip() if known else recipe


def _other_shape(actual: Any, expected: Any) -> bool:
    return isinstance(expected, np.ndarray) and np.shape(actual) != expected.shape


def _reshaped_hint(reshaped: Sequence[tuple[Case, Any, np.ndarray]], name: str,
                   shape_hint: str | None) -> str | None:
    """A wrong shape's hint: what holds where the values are right and only axes of size 1
    differ (symptoms.size_one_axes_moved), before the check's own shape hint; said only where
    it holds of every case returned in a wrong shape (`reshaped`: case, result, truth): a
    stack along the wrong axis looks like a moved axis of size 1 where that axis has one
    entry, and only there."""
    said = []
    for case, actual, expected in reshaped:
        try:
            said.append(symptoms.size_one_axes_moved(
                name, np.asarray(actual, dtype=np.float64), expected, case.dtype))
        except (TypeError, ValueError):
            said.append(None)
    if not said or None in said:
        return shape_hint
    return f"What holds: {_sentence(cast(str, said[0]))} {shape_hint or ''}".strip()


def _sentence(fact: str) -> str:
    """A fact as a sentence: capitalised where it opens with a word, not with a name (dW)."""
    opening = fact.split(" ", 1)[0]
    fact = fact.rstrip(".") + "."
    return fact[0].upper() + fact[1:] if opening in ("your", "wrong", "right") else fact


def correctness(spec: Spec) -> PlanFactory:
    """The candidate's results over many cases against the truth; the mistake named.

    `hint` is the recipe shown when no known mistake explains the results; `failure_hint`,
    when given, is shown for every failure instead (a check whose every failure has one
    cause, like P is W)."""
    call, maker, truth = spec.call(), spec.maker("cases"), spec.maker("truth")
    name, mistakes, malformed = spec.text("name", "the result"), spec.mistakes(), spec.malformed
    failure_hint = spec.text("failure_hint", None)
    hint = spec.text("hint", REQUIRED if failure_hint is None else "")
    raise_hint = spec.text("raise_hint", "Valid input must not raise; " + hint)
    shape_hint, prefix = spec.text("shape_hint", None), spec.text("prefix", "")
    passed_text = spec.text("passed", None)
    stages = spec.value("stages", {})

    def plan(ctx: Context) -> Plan:
        cases = _cases(maker, ctx)
        truth_of = _once_per_case(truth)

        def differential(wrong: Sequence[tuple[Case, Any]], raised: dict[str, Any] | None,
                         elsewhere: Sequence[tuple[Case, Any]]) -> Diagnosis | None:
            rejected = (_cases(getattr(spec.judge, malformed[0]), ctx), malformed[1]) \
                if malformed else None
            return mutants.diagnosis(spec.round, ctx.part_id, ctx.flavor, call, wrong, name,
                                     raised, ctx.workspace, truth_of, elsewhere=elsewhere,
                                     rejected=rejected)

        def judge(observed: list[Observation]) -> Verdict:
            verdict = judge_cases(ctx, cases, observed, truth_of, name, mistakes, hint,
                                  raise_hint, shape_hint, stages,
                                  None if failure_hint else differential)
            if verdict.status == "passed" and ctx.flavor in spec.signature_flavors:
                verdict = _signature_kept(spec.round, ctx, call["function"]) or verdict
            if verdict.status == "passed":
                return passed(passed_text.format(count=len(cases))) if passed_text else verdict
            return replace(verdict, message=prefix + verdict.message,
                           hint=failure_hint or verdict.hint)

        return Plan("call_each", {**call, "cases": [c.data() for c in cases]}, judge)

    return plan


def _signature_kept(round_: Round, ctx: Context, function: str) -> Verdict | None:
    """A failure where the candidate's file gives one of `function`'s parameters another
    default than the reference's (or none): every case passes each argument, so only the
    signature shows it. None where it keeps them, or where no file can be read."""
    file = round_.part(ctx.part_id).file
    yours = mutants.source_text(Path(ctx.workspace) / "exercises" / file) if ctx.workspace \
        else None
    contract = mutants.source_text(round_.reference_dir(ctx.flavor) / file)
    if yours is None or contract is None:
        return None
    changed = changed_defaults(yours, contract, function)
    if not changed:
        return None
    first = changed[0]
    return failed("; ".join(c.describe(function) for c in changed),
                  hint=CHANGED_DEFAULT_HINT.format(parameter=first.parameter,
                                                   default=first.contract))


CHANGED_DEFAULT_HINT = ("Keep the signature as the stub gives it: a caller who leaves "
                        "{parameter} out relies on {parameter} = {default}.")

# --- inputs left unchanged, fresh results, dtype and device ------------------------------------


def inputs_unchanged(spec: Spec) -> PlanFactory:
    """Every input holds, bit for bit, what it held before the call, in every case (small N
    included: a slip can hide at N = 0 or 1); with `shared_hint`, the result is also new
    memory, no input (or a view of one) handed back."""
    return _untouched(spec, fresh=False)


def fresh_result(spec: Spec) -> PlanFactory:
    """The result is new memory (not an input or a view of one) and the inputs are unchanged,
    in every case (small N included: returning W itself when N <= 1 is a slip too): the
    inputs_unchanged kind for one function, whose result must also be readable arrays, with
    `shared_hint` required and the inputs' hint named `changed_hint`."""
    return _untouched(spec, fresh=True)


CHANGED_INPUT_HINT = ("Your code wrote into the caller's {names}: an augmented assignment "
                      "(`{first} -= ...`), an in-place method (`.sub_()`, `.mul_()`), `out=`, "
                      "or another name for the same array (`y = {first}` then `y -= ...`) "
                      "changes what the caller still holds. Compute into new arrays.")


def _changed_hint(hint: str, changed: Sequence[str], inputs: Sequence[str]) -> str:
    """The check's hint, unless it was written for another input's slip: where it names some
    of the `inputs` but none of those that `changed`, one that names those that did."""
    def named(name: str) -> bool:
        return re.search(rf"(?<![\w.]){re.escape(name)}(?!\w)", hint) is not None

    if any(map(named, changed)) or not any(map(named, inputs)):
        return hint
    return CHANGED_INPUT_HINT.format(names=" and ".join(changed), first=changed[0])


def _untouched(spec: Spec, fresh: bool) -> PlanFactory:
    maker, function = spec.watched_cases(), spec.text("function", REQUIRED if fresh else None)
    args, run = spec.names("args"), None if fresh else spec.helper("run")
    changed_hint = spec.text("changed_hint" if fresh else "hint")
    shared_hint = spec.text("shared_hint", REQUIRED if fresh else None)

    def plan(ctx: Context) -> Plan:
        cases = _cases(maker, ctx)

        def broken(where: str, shared: list[str], changed: list[str], inputs: list[str],
                   when: str = "") -> Verdict | None:
            """The failure of a call whose result shares memory with `shared` and that
            changed the inputs `changed` (of `inputs`), where it broke the property."""
            if shared_hint and shared:
                return failed(f"{where}: the result shares memory with {' and '.join(shared)}",
                              hint=shared_hint)
            if changed:
                return failed(f"{where}: {' and '.join(changed)} "
                              f"{'was' if len(changed) == 1 else 'were'} modified{when}",
                              hint=_changed_hint(changed_hint, changed, inputs))
            return None

        def judge(rows: list[Observation]) -> Verdict:
            for case, row in zip(cases, rows, strict=False):
                if row["raised"]:
                    return raised_verdict(case.describe(), row["raised"],
                                          own_raise_hint(row["raised"]) or VALID_INPUT_HINT)
                changed = [n for n, after in row["after"].items()
                           if not unchanged(np.asarray(case[n]), after)]
                when = LATER_CALL if changed and set(changed) <= set(row.get("later", ())) \
                    else ""
                verdict = broken(case.describe(), row["shared"], changed, list(row["after"]),
                                 when)
                if verdict is not None:
                    return verdict
            what = "a fresh result, inputs unchanged" if shared_hint else "inputs unchanged"
            return passed(f"{what} in {len(cases)} cases ({span(cases)})")

        def kept(label: str, call: Observation) -> Verdict | None:
            changed = [str(n) for n in call.get("wrote") or ()]
            return broken(label + IN_A_VALUES_CALL, [str(n) for n in call.get("shared") or ()],
                          changed, list(args), LATER_CALL if changed and set(changed) <= {
                              str(n) for n in call.get("later") or ()} else "")

        probe_args = {"function": function, "cases": [c.data() for c in cases], "args": args,
                      "run": run, "read_result": fresh}
        plain = None if run else {"function": function, "args": args, "returns": "tree"}
        return Plan("inputs_after", probe_args,
                    with_answers(judge, cases, "the result", plain=plain, kept=kept),
                    baseline=answers_baseline(spec, ctx, "inputs_after", probe_args),
                    borrows=spec.value_checks)

    return plan


def dtype_device(spec: Spec) -> PlanFactory:
    """The result keeps the first input's dtype and device."""
    maker, function, args = spec.watched_cases(), spec.text("function"), spec.names("args")
    hint = spec.text("hint")

    def moved(want: list[Any], got: list[Any]) -> Verdict | None:
        """The failure of a call whose result's dtype and device (`got`) are not its first
        input's (`want`); None where they are."""
        return None if got == want else failed(
            f"{args[0]} was {' on '.join(map(str, want))}; the result is "
            f"{' on '.join(map(str, got))}", hint=hint)

    def judge(rows: list[Observation]) -> Verdict:
        for row in rows:
            if row["raised"]:
                return failed(f"raised {format_raised(row['raised'])}")
            verdict = moved(row["want"], row["got"])
            if verdict is not None:
                return verdict
        return passed()

    def kept(label: str, call: Observation) -> Verdict | None:
        got, want = call.get("got"), call.get("want")
        verdict = moved(want, got) if isinstance(got, list) and isinstance(want, list) else None
        return verdict and replace(verdict,
                                   message=f"{label}{IN_A_VALUES_CALL}: {verdict.message}")

    def plan(ctx: Context) -> Plan:
        cases = _cases(maker, ctx)
        probe_args = {"function": function, "args": args, "cases": [c.data() for c in cases]}
        plain = {"function": function, "args": args, "returns": "tree"}
        return Plan("dtype_device", probe_args,
                    with_answers(judge, cases, "the result", plain=plain, kept=kept),
                    baseline=answers_baseline(spec, ctx, "dtype_device", probe_args),
                    borrows=spec.value_checks)

    return plan


def keeps_dtype(spec: Spec) -> PlanFactory:
    """Every array of the result keeps the case's dtype (float32 in, float32 out), in every
    case: for results that are several arrays (a table of gradients, read by `read` or made by
    `run`), where `dtype_device`, which compares one result with the first input, cannot look.
    `fields` are the entries judged (default all); a lone array is named `name`."""
    call, maker, fields = spec.call(), spec.watched_cases(), spec.value("fields", None)
    name, hint = spec.text("name", "the result"), spec.text("hint")
    if fields is not None:
        spec.names("fields")

    def dtypes(value: Any) -> dict[str, str]:
        if not isinstance(value, dict):
            return {name: str(np.asarray(value).dtype)}
        return {k: str(np.asarray(v).dtype) for k, v in value.items()
                if fields is None or k in fields}

    def plan(ctx: Context) -> Plan:
        cases = _cases(maker, ctx)

        def promoted(case: Case, row: Observation) -> Verdict | None:
            wrong: dict[str, list[str]] = {}
            for key, dtype in dtypes(row["value"]).items():
                if dtype != case.dtype:
                    wrong.setdefault(dtype, []).append(key)
            said = [f"{symptoms.listed(keys)} {'is' if len(keys) == 1 else 'are'} {dtype}"
                    for dtype, keys in wrong.items()]
            return failed(f"{case.describe()}: {' and '.join(said)}", hint=hint) \
                if said else None

        def judge(rows: list[Observation]) -> Verdict:
            kept = " and ".join(dict.fromkeys(c.dtype for c in cases))
            return _each_case(cases, rows, promoted,
                              f"every result keeps the inputs' dtype ({kept})")

        probe_args = {**call, "cases": [c.data() for c in cases]}
        plain = None if call["run"] else call
        return Plan("call_each", probe_args,
                    with_answers(judge, cases, name, key="value", plain=plain),
                    baseline=answers_baseline(spec, ctx, "call_each", probe_args, "value"))

    return plan


def _each_case(cases: list[Case], rows: list[Observation],
               wrong: Callable[[Case, Observation], Verdict | None], done: str) -> Verdict:
    """The verdict on the first case that raised, or that `wrong` fails; else a pass that
    says `done`."""
    for case, row in zip(cases, rows, strict=False):
        if row["raised"]:
            return raised_verdict(case.describe(), row["raised"])
        verdict = wrong(case, row)
        if verdict is not None:
            return verdict
    return passed(done)


def returns_float(spec: Spec) -> PlanFactory:
    """The call returns a Python float in every case: a 0-d array or tensor has the right
    value yet is not what the contract asks for, and a loss tensor that requires grad keeps
    its whole graph alive in whatever holds it. The result is called `name`."""
    function, maker = spec.text("function"), spec.watched_cases()
    args, call = spec.names("args"), spec.helper("call")
    name, hint = spec.text("name", "the result"), spec.text("hint")

    def plan(ctx: Context) -> Plan:
        cases = _cases(maker, ctx)

        def not_float(where: str, is_float: bool, type_name: Any) -> Verdict | None:
            return None if is_float else failed(
                f"{where}: {name} is of type {type_name}, not a Python float", hint=hint)

        def judge(rows: list[Observation]) -> Verdict:
            return _each_case(cases, rows, lambda case, row: not_float(
                case.describe(), row["is_float"], row["type"]),
                f"{name} is a Python float in every case")

        def kept(label: str, row: Observation) -> Verdict | None:
            return not_float(label + IN_A_VALUES_CALL, row.get("is_float", True),
                             row.get("type"))

        probe_args = {"function": function, "cases": [c.data() for c in cases], "call": call,
                      "args": args}
        plain = {"function": function, "call": call, "args": args, "returns": "tree"}
        return Plan("result_types", probe_args,
                    with_answers(judge, cases, name, plain=plain, kept=kept),
                    baseline=answers_baseline(spec, ctx, "result_types", probe_args),
                    borrows=spec.value_checks)

    return plan


# --- autograd: through the candidate's forward, gradcheck, no autograd inside ------------------


def explain_error(round_: Round, message: str) -> tuple[str, str] | None:
    """(what happened, what to do) for a torch error the round has a topic about. The pointer
    to the topic is added here, not written in its ## fix: `grader explain` shows that section
    too, where telling the reader to run the command they ran would be noise."""
    topic = error_topic(round_, message)
    if topic is None:
        return None
    return (topic.text("what happened"),
            f"{topic.text('fix')} `grader explain {topic.name}` shows it live.")


def judge_gradient(round_: Round, case: Case, obs: Observation, variable: str,
                   expected: np.ndarray, wrong_hint: str) -> Verdict:
    """Verdict on autograd through the candidate's forward (probes.autograd.gradient_through)."""
    stage = obs["stage"]
    if stage == "upstream_written":
        return failed(f"{case.describe()}: out.backward(G) changed G, the gradient your backward "
                      "received: it belongs to the caller (and to every other branch of the "
                      "graph that reads it)", hint=UPSTREAM_HINT)
    if stage in ("forward", "backward", "sum_backward"):
        raised = obs["raised"]
        known = explain_error(round_, raised["message"])
        how = {"forward": "forward", "backward": "backward",
               "sum_backward": "out.sum().backward()"}[stage]
        text = (f"{case.describe()}, {variable}.requires_grad: {how} raised {raised['type']}: "
                f"{first_line(raised['message'])}")
        if stage == "sum_backward" and not known:
            return failed(text, hint=UPSTREAM_HINT)
        if known:
            return failed(f"{text}\n{known[0]}", hint=known[1])
        where = f"\n  at {raised['where']}" if raised["where"] else ""
        return failed(text + where)
    if stage in ("detached", "no_grad"):
        what, fix = explain_error(round_, "does not require grad and does not have a grad_fn") \
            or ("", "")
        return failed(f"{case.describe()}: {variable}.grad stayed empty: {what}", hint=fix)
    mismatch = find_mismatch(obs["grad"], expected, case.dtype)
    if mismatch:
        return failed(f"{case.describe()}: autograd's d{variable} through your forward is wrong: "
                      f"{mismatch.describe(variable + '.grad')}", hint=wrong_hint)
    return passed(f"{variable}.grad matches the reference gradient")


def _through(spec: Spec) -> dict[str, Any]:
    return {"function": spec.text("function"), "args": spec.names("args"),
            "upstream": spec.text("upstream"), "wrt": int(spec.number("wrt", 0))}


def autograd(spec: Spec) -> PlanFactory:
    """torch autograd through the candidate's forward gives the right gradient."""
    maker, through = spec.maker("case"), _through(spec)
    truth, hint = spec.maker("gradient"), spec.text("hint", WRONG_GRADIENT_HINT)
    variable = through["args"][through["wrt"]]

    def plan(ctx: Context) -> Plan:
        (case,) = _cases(maker, ctx)
        return Plan("autograd_through", {**through, "case": case.data()},
                    lambda obs: judge_gradient(spec.round, case, obs, variable, truth(case), hint))

    return plan


def gradcheck(spec: Spec) -> PlanFactory:
    """torch.autograd.gradcheck in float64 over the case's `inputs`, plus the judge's own look
    at the same case.

    Two forms: without `make`, gradcheck runs on the candidate's own (autograd) `function`, and
    the judge then checks autograd's gradient through it; with `make` (a helper that builds a
    torch function around the candidate's hand-written backward), the judge then checks that
    backward's result on the same case (call: function/args/run), so a patched gradcheck proves
    nothing. A third, with `grads`, is gradcheck_every's."""
    if "grads" in spec.table:
        return gradcheck_every(spec)
    maker, inputs, make = spec.maker("case"), spec.names("inputs"), spec.helper("make")
    if make is None:
        through = _through(spec)
        variable = through["args"][through["wrt"]]
        truth_gradient, hint = spec.maker("gradient"), spec.text("hint", WRONG_GRADIENT_HINT)
        mistakes: tuple[Mistake, ...] = ()
    else:
        gradient_call = spec.call()
        truth, mistakes = spec.maker("truth"), spec.mistakes()
        hint = spec.text("hint", GRADCHECK_HINT)

    def judge_through(case: Case, obs: Observation) -> Verdict:
        result = obs["gradcheck"]
        if not result["ok"]:
            message = result["raised"]["message"]
            known = explain_error(spec.round, message)
            return failed(f"{case.describe()}: gradcheck raised {result['raised']['type']}: "
                          f"{first_line(message)}", hint=known[1] if known else
                          "gradcheck compares autograd's Jacobian with finite differences: the "
                          "two disagree, so part of your forward is invisible to autograd.")
        return judge_gradient(spec.round, case, obs["through"], variable, truth_gradient(case),
                              hint)

    def judge_backward(case: Case, obs: Observation) -> Verdict:
        result, value = obs["gradcheck"], obs["value"]
        if not result["ok"]:
            raised = result["raised"]
            where = f"\n  at {raised['where']}" if raised["where"] else ""
            named = diagnose([(case, value["value"])], mistakes) \
                if value["value"] is not None else None
            return failed(f"{case.describe()}: gradcheck raised {raised['type']}: "
                          f"{first_line(raised['message'])}{where}", hint=named or hint)
        if value["raised"] or not tree_matches(value["value"], truth(case), "float64"):
            return failed("gradcheck reported success, but your result on the same input is "
                          "wrong", hint="See the correctness check for the evidence.")
        return passed("gradcheck passed (float64, slow mode)")

    def plan(ctx: Context) -> Plan:
        (case,) = _cases(maker, ctx)
        if make is None:
            return Plan("gradcheck", {"make": None, "function": through["function"],
                                      "case": case.data(), "inputs": inputs, "through": through},
                        lambda obs: judge_through(case, obs))
        return Plan("gradcheck", {"make": make, "function": None, "case": case.data(),
                                  "inputs": inputs, "gradient": gradient_call},
                    lambda obs: judge_backward(case, obs))

    return plan


def autograd_function(spec: Spec) -> PlanFactory:
    """`class` is a torch.autograd.Function (with `old_style_hint`, one with a setup_context of
    its own: the torch 2 style) and `function(*args)` goes through it: its result's node is the
    Function's backward node. Without a Function that the result goes through, the gradients
    are autograd's own, so a failure here voids (Verdict.voids) the checks of the backward
    (evidence against them: a process could forge this check's pass, worth nothing graded,
    never its failure)."""
    maker, cls, function = spec.maker("case"), spec.text("class"), spec.text("function")
    args = spec.names("args")
    wrt = spec.names("wrt", args)
    not_function_hint, bypass_hint = spec.text("not_function_hint"), spec.text("bypass_hint")
    old_style_hint = spec.text("old_style_hint", None)
    if set(wrt) - set(args):
        raise RoundError(f"{spec.where}: wrt names inputs not in args")
    called = f"{function}({', '.join(args)})"

    def plan(ctx: Context) -> Plan:
        (case,) = _cases(maker, ctx)

        def judge(obs: Observation) -> Verdict:
            if not obs["is_function"]:
                return replace(failed(f"{cls} is a {obs['kind']} that does not subclass "
                                      "torch.autograd.Function", hint=not_function_hint),
                               voids=True)
            if obs["raised"]:
                return raised_verdict(case.describe(), obs["raised"])
            # Evidence against the backward voids first, whatever else is wrong: a result
            # that bypasses the Function carries autograd's own gradients.
            if not obs["through"]:
                hint = DETACHED_HINT.format(called=called, cls=cls) \
                    if obs["grad_fn"] == "NoneType" else bypass_hint
                return replace(failed(f"{called}.grad_fn is {obs['grad_fn']}, not {cls}'s "
                                      "backward node", hint=hint), voids=True)
            if not obs["setup_context"]:
                return failed(f"{cls} has no setup_context of its own: forward(ctx, ...) is the "
                              "old style", hint=old_style_hint)
            return passed(f"{called}.grad_fn is {obs['grad_fn']}")

        return Plan("function_node", {"cls": cls, "function": function, "case": case.data(),
                                      "args": args, "wrt": wrt,
                                      "setup_context": old_style_hint is not None}, judge)

    return plan


DETACHED_HINT = ("{called} carries no graph at all (its grad_fn is None), so no gradient "
                 "reaches the inputs: the result was cut from the graph (.detach(), .data) or "
                 "made outside it (through numpy, under torch.no_grad()). Return the output of "
                 "{cls}.apply itself.")
"""The autograd_function kind's hint where the result has no node at all: no bypass of the
Function, but its output cut from the graph."""


def gradcheck_every(spec: Spec) -> PlanFactory:
    """gradcheck of the candidate's `function` (one that goes through their autograd.Function)
    with every input of `inputs` requiring grad, then the judge's own look at autograd's
    gradients through it on the same case (`grads`, a probes.py helper `grads(api, case) ->
    {"value", "raised"}`, against `gradients`), so a patched gradcheck proves nothing. `hint`
    reads gradcheck's mismatch (which input is which); `wrong_hint` points at the check that
    shows the wrong gradients; `through` words what they went through."""
    maker, inputs, function = spec.maker("case"), spec.names("inputs"), spec.text("function")
    grads, truth = spec.helper("grads"), spec.maker("gradients")
    hint, wrong_hint, through = spec.text("hint"), spec.text("wrong_hint"), spec.text("through")

    def plan(ctx: Context) -> Plan:
        (case,) = _cases(maker, ctx)

        def judge(obs: Observation) -> Verdict:
            result = obs["gradcheck"]
            if not result["ok"]:
                raised = result["raised"]
                known = explain_error(spec.round, raised["message"])
                where = f"\n  at {raised['where']}" if raised["where"] else ""
                return failed(f"{case.describe()}: gradcheck raised {raised['type']}: "
                              f"{first_line(raised['message'])}{where}",
                              hint=known[1] if known else hint)
            found = obs["grads"]
            if found["raised"] or tree_difference(found["value"], truth(case), "float64",
                                                  "the gradients"):
                return failed("gradcheck reported success, but autograd's gradients through "
                              f"{through} on the same input are wrong", hint=wrong_hint)
            return passed(f"gradcheck passed (float64, slow mode, {symptoms.listed(inputs)} "
                          "requiring grad)")

        return Plan("gradcheck", {"make": None, "function": function, "case": case.data(),
                                  "inputs": inputs, "grads": grads}, judge)

    return plan


def needs_input_grad(spec: Spec) -> PlanFactory:
    """The backward of the candidate's autograd.Function honours ctx.needs_input_grad: its node
    (of `function(*args)`'s result), called with `upstream` and one input requiring grad at a
    time, returns one entry per input, None for every other, and the right gradient (the
    entry d<name> of `gradients`); with `flops` (checks.py: case -> one gradient's matmul
    flops), it also computes no more than `flop_slack` times that."""
    maker, function, args = spec.maker("case"), spec.text("function"), spec.names("args")
    upstream, truth = spec.text("upstream"), spec.maker("gradients")
    none_hint, arity_hint = spec.text("none_hint"), spec.text("arity_hint")
    wrong_hint, shape_hint = spec.text("wrong_hint"), spec.text("shape_hint", None)
    flops = spec.maker("flops", None)
    slack = spec.number("flop_slack", 1.5) if flops else 0.0
    computed_hint = spec.text("computed_hint") if flops else None

    def plan(ctx: Context) -> Plan:
        (case,) = _cases(maker, ctx)
        gradients = truth(case)

        def one(row: Observation, name: str, index: int) -> Verdict | None:
            where = f"{case.describe()}, only {name} requiring grad"
            if row["raised"]:
                return raised_verdict(where, row["raised"])
            if row["returned"] is None:
                return failed(f"{where}: backward returned a {row['kind']}, not one entry per "
                              "input of forward", hint=arity_hint)
            extra = [f"d{other} ({row['returned'][i]})" for i, other in enumerate(args)
                     if i != index and row["returned"][i] is not None]
            if extra:
                return failed(f"{where}: backward also returned {' and '.join(extra)}, which "
                              "nobody asked for", hint=none_hint)
            if flops and row["flops"] > slack * flops(case):
                return failed(f"{where}: backward did {row['flops']} matmul flops; one gradient "
                              f"takes {flops(case)}", hint=computed_hint)
            expected = gradients["d" + name]
            difference = tree_difference(row["value"], expected, "float64", "d" + name)
            if difference:
                shape = shape_hint and np.shape(row["value"]) != np.shape(expected)
                return failed(f"{where}: {difference}", hint=shape_hint if shape else wrong_hint)
            return None

        def judge(rows: list[Observation]) -> Verdict:
            crossed = _gated_by_another(args, rows)
            if crossed:
                return failed(f"{case.describe()}, one input requiring grad at a time: "
                              f"{crossed}", hint=f"Your {crossed}.")
            for index, (name, row) in enumerate(zip(args, rows, strict=False)):
                verdict = one(row, name, index)
                if verdict:
                    return verdict
            return passed("with one input requiring grad, backward returned its gradient "
                          "alone (None for the others)")

        return Plan("backward_alone", {"function": function, "case": case.data(),
                                       "args": args, "upstream": upstream,
                                       "count_flops": flops is not None}, judge)

    return plan


def _gated_by_another(args: Sequence[str], rows: Sequence[Observation]) -> str | None:
    """The gradient that comes back exactly when another input alone requires grad, and not
    when its own does (`dB ... if ctx.needs_input_grad[0]`, the flags unpacked in the wrong
    order, or its own flag negated), said as such; None when every row returned a tuple and
    none is so crossed. `rows[k]` is the backward with only args[k] requiring grad."""
    if len(rows) != len(args) or any(r["raised"] or r["returned"] is None for r in rows):
        return None
    for j, name in enumerate(args):
        when = [k for k, row in enumerate(rows) if row["returned"][j] is not None]
        if when and j not in when:
            other = when[0]
            # An own flag read the wrong way round (`if not ctx.needs_input_grad[j]`) comes
            # back for the others alike: the rows, one input each, cannot tell the two apart.
            return (f"d{name} comes back when only {args[other]} requires grad, and not when "
                    f"{name} does: its condition reads {args[other]}'s flag "
                    f"(ctx.needs_input_grad[{other}]) where it should read its own "
                    f"(ctx.needs_input_grad[{j}]), or reads its own the wrong way round "
                    f"(`not ctx.needs_input_grad[{j}]`)")
    return None


def autograd_used(case: Case, runs: int, hint: str) -> Verdict:
    """A no-autograd check's failure, which voids (Verdict.voids): the probe's count of
    autograd's engine runs, or 1 for a differentiation it saw without the engine (see
    probes.autograd.count_autograd_runs)."""
    return replace(failed(f"{case.describe()}: your code differentiated with torch autograd "
                          f"({runs} run(s) seen: backward(), autograd.grad, an engine of its "
                          "own, torch.func or forward-mode duals)", hint=hint), voids=True)


def autograd_not_judged(case: Case, raised: dict[str, Any]) -> Verdict:
    """A no-autograd check whose watched call raised on valid input: nothing shows how the
    backward computes, so a check of its values that passed does not count (code could raise
    only when watched, and keep the values autograd gave it everywhere else); where none
    passed, the raise is theirs to report, and this check is skipped, accusing nothing
    (Verdict.otherwise)."""
    said = f"{case.describe()}: your backward raised {format_raised(raised)}"
    return replace(failed(f"not judged: {case.describe()}: where it was watched for autograd, "
                          f"your backward raised {format_raised(raised)}; nothing shows how it "
                          "computes", hint=own_raise_hint(raised) or VALID_INPUT_HINT),
                   voids=True, otherwise=skipped(f"not judged: {said} before anything could "
                                                 "be seen of how it computes"))


def autograd_free_answer(case: Case, value: Any, truth: Any, name: str) -> Verdict | None:
    """The failure of a watched call that ran no autograd but gave a wrong answer (None when
    it gave the right one): what a backward gives when watched is the only answer known to
    come without autograd, so a check of its values that passed does not count (it was made
    another way); where none passed, the wrong answer is theirs to report, and this check
    passes (Verdict.otherwise)."""
    difference = tree_difference(value, truth, case.dtype, name)
    if difference is None:
        return None
    said = f"{case.describe()}: where it was watched for autograd, {difference}"
    return replace(failed(said, hint="A backward must give the same right answer wherever it "
                                     "runs: the run watched for autograd is held to the truth "
                                     "too."), voids=True,
                   otherwise=passed(f"no autograd seen ({said}, as the checks of its values "
                                    "show: theirs to name)"))


def no_autograd(spec: Spec) -> PlanFactory:
    """A hand-written backward never runs autograd's engine; with `truth`, the watched call
    also gives the right answer (read by `read`, named `name`), so that code cannot behave
    one way when watched and another everywhere else. With `call`, a helper builds the
    function's arguments (a forward's cache) before the count starts."""
    maker, function, args = spec.maker("case"), spec.text("function", None), spec.names("args")
    call = spec.helper("call")
    run, hint, read = spec.helper("run"), spec.text("hint"), spec.helper("read")
    truth, name = spec.maker("truth", None), spec.text("name", "the result")

    def plan(ctx: Context) -> Plan:
        (case,) = _cases(maker, ctx)

        def judge(obs: Observation) -> Verdict:
            if obs.get("at_import"):
                return replace(failed(
                    f"autograd's engine ran {obs['at_import']} time(s) while your file was "
                    "imported: module-level code differentiated (a derivative traced or kept "
                    "then is autograd's work, whatever the calls replay)",
                    hint=AUTOGRAD_AT_IMPORT_HINT), voids=True)
            if obs["runs"]:
                return autograd_used(case, obs["runs"], hint)
            if obs["raised"]:
                return autograd_not_judged(case, obs["raised"])
            wrong = truth and autograd_free_answer(case, obs["value"], truth(case), name)
            return wrong or passed()

        return Plan("autograd_runs", {"function": function, "case": case.data(),
                                      "args": args, "run": run, "read": read, "call": call},
                    judge, forkless=True)

    return plan


# --- finite differences -------------------------------------------------------------------------


def central_differences(loss: Callable[[dict[str, np.ndarray]], float],
                        inputs: dict[str, np.ndarray], wrt: str, eps: float) -> np.ndarray:
    """Central differences of loss(inputs) w.r.t. every entry of inputs[wrt], in float64."""
    base = {k: np.asarray(v, dtype=np.float64) for k, v in inputs.items()}
    x = base[wrt]
    grad = np.empty_like(x)
    for index in np.ndindex(*x.shape):
        plus, minus = x.copy(), x.copy()
        plus[index] += eps
        minus[index] -= eps
        grad[index] = (loss({**base, wrt: plus}) - loss({**base, wrt: minus})) / (2 * eps)
    return grad


def finite_differences(spec: Spec) -> PlanFactory:
    """The candidate's gradient against central differences of the round's loss, float64.

    `wrt` names one input, whose gradient the call returns; or a list of inputs, checked in
    order (the simplest first: a wrong one there explains the rest), whose gradients are the
    entries d<name> of the table the call returns, each with its own hint in `hints`. The loss
    is `loss(inputs)`, or `loss(inputs, case)` where it needs the case's settings. With
    `forward` ({entry, truth, says}), the result's `entry` is the candidate's own forward output
    (a backward graded on the cache that forward made): a wrong one is said first, and the
    gradients are not compared."""
    call, maker, loss = spec.call(), spec.maker("case"), spec.maker("loss")
    takes_case = _parameters(loss, spec) == 2
    wrt = spec.value("wrt")
    several = isinstance(wrt, list)
    names = spec.names("wrt") if several else [spec.text("wrt")]
    loss_name, eps = spec.text("loss_name"), spec.number("eps", 1e-6)
    tolerance = tuple(spec.value("tolerance", [1e-5, 1e-6]))
    mistakes, hint = spec.mistakes(), spec.text("hint", FINITE_DIFFERENCES_HINT)
    hints, shape_hint = spec.value("hints", {}), spec.text("shape_hint", None)
    stages, forward = spec.value("stages", {}), spec.value("forward", None)
    if set(hints) - set(names):
        raise RoundError(f"{spec.where}: hints name inputs not in wrt: "
                         f"{', '.join(sorted(set(hints) - set(names)))}")
    if forward is not None and (not isinstance(forward, dict)
                                or set(forward) != {"entry", "truth", "says"}):
        raise RoundError(f"{spec.where}: forward must be a table of entry, truth and says")
    own_forward = None if forward is None else (
        str(forward["entry"]), _function(spec, forward["truth"], "forward.truth"),
        str(forward["says"]))

    def plan(ctx: Context) -> Plan:
        (case,) = _cases(maker, ctx)
        of_inputs = (lambda inputs: loss(inputs, case)) if takes_case else loss

        def judge(observed: list[Observation]) -> Verdict:
            obs = observed[0]
            if obs["raised"]:
                verdict = raised_verdict(case.describe(), obs["raised"])
                stage = stages.get(obs.get("stage", ""))
                return failed(stage["prefix"] + verdict.message, hint=stage["hint"]) \
                    if stage else verdict
            if own_forward is not None:
                entry, forward_truth, says = own_forward
                wrong = tree_difference(obs["value"].get(entry), forward_truth(case), "float64",
                                        entry)
                if wrong:
                    return failed(f"{case.describe()}: {says} ({wrong}), so its cache "
                                  "is suspect and the gradients were not compared",
                                  hint=stages.get("forward", {}).get("hint"))
            for name in names:
                numeric = central_differences(of_inputs, case.inputs, name, eps)
                value = obs["value"].get("d" + name) if several else obs["value"]
                if np.shape(value) != numeric.shape:
                    return failed(f"{case.describe()}: d{name} has shape {np.shape(value)}, "
                                  f"{name} has {numeric.shape}", hint=shape_hint)
                mismatch = find_mismatch(np.asarray(value), numeric, "float64", tolerance)
                if mismatch:
                    i = ", ".join(map(str, mismatch.index))
                    return failed(
                        f"{case.describe()}, loss {loss_name}, eps {eps:g}: dL/d{name}[{i}] by "
                        f"finite differences is {mismatch.expected:.6g}, yours is "
                        f"{mismatch.yours:.6g} (max abs error {mismatch.max_abs:.3g}; "
                        f"seed {ctx.seed})", hint=hints.get(name) or diagnose(
                            [(case, value)], mistakes) or hint.format(wrt=name, part=ctx.part_id))
            if several:
                return passed(f"{symptoms.listed(['d' + n for n in names])} agree with central "
                              "differences")
            return passed(f"all {np.size(value)} entries of d{names[0]} agree with central "
                          "differences")

        return Plan("call_each", {**call, "cases": [case.data()]}, judge)

    return plan


def _function(spec: Spec, name: Any, key: str) -> Callable[..., Any]:
    """A function of the round's checks.py named inside a table of the row (`key` says where)."""
    found = getattr(spec.judge, str(name), None)
    if not callable(found):
        raise RoundError(f"{spec.where}: {key} = {name!r}: checks.py has no such function")
    return cast(Callable[..., Any], found)


def _parameters(fn: Callable[..., Any], spec: Spec) -> int:
    """How many arguments a round's function takes: 1 or 2 where the kind allows either."""
    count = len(inspect.signature(fn).parameters)
    if count not in (1, 2):
        raise RoundError(f"{spec.where}: {fn.__name__} must take (inputs) or (inputs, case)")
    return count


# --- runs compared with the reference's ---------------------------------------------------------


def _flat(tree: dict[str, Any]) -> dict[str, Any]:
    """Observations one level deep, so that a message names the field of a nested entry:
    changed['encoder.0.weight'], params['head.0.bias'][1]."""
    flat = {}
    for field, value in tree.items():
        if isinstance(value, dict):
            flat.update({f"{field}[{key!r}]": inner for key, inner in value.items()})
        else:
            flat[field] = value
    return flat


def _over(actual: dict[str, Any], limits: dict[str, float]) -> str | None:
    for field, limit in limits.items():
        if actual[field] > limit:
            return f"{field}: {actual[field]:g} (at most {limit:g})"
    return None


def compare_runs(spec: Spec) -> PlanFactory:
    """Each case's run (the probes.py helper its extra's `run` names: a piece of code driven
    end to end, observed as a table of plain data) on the candidate's code against `truth`, the
    same run on the reference; `fields` are the observations compared (default all), `at_most`
    those that pass at or under a limit instead. A case whose extra says `malformed` must raise
    ValueError (`validation_hint` otherwise), judged once every valid case matched. A run that
    answered and differs voids the checks the row's `voids` names where the first of them
    passed (an observation of how right values were made, such as a graph kept alive, can
    only cost the submission); where it did not, this verdict stands alone."""
    maker, truth, mistakes = spec.maker("cases"), spec.maker("truth"), spec.mistakes()
    fields = spec.value("fields", None)
    limits: dict[str, float] = spec.value("at_most", {})
    hint, validation_hint = spec.text("hint"), spec.text("validation_hint", VALIDATION_HINT)

    def select(tree: dict[str, Any], names: Sequence[str] | None) -> dict[str, Any]:
        return {k: tree[k] for k in names} if names is not None else tree

    def differential(ctx: Context, wrong: Sequence[tuple[Case, Any]], named: bool,
                     truth: Callable[[Case], Any],
                     compared: Callable[[Any], Any]) -> Diagnosis | None:
        """The reference's mutants, run as the first wrong case was; after a listed mistake's
        hint where one named it; then the candidate's file repaired, a run's fields compared
        as this check compares them (`compared`) with the `truth`'s."""
        case, value = wrong[0]
        raised = value.get("raised") if isinstance(value, dict) and list(value) == ["raised"] \
            else None
        same_run = [(c, v) for c, v in wrong if c.extra.get("run") == case.extra.get("run")]
        found = mutants.diagnosis(spec.round, ctx.part_id, ctx.flavor,
                                  {"function": None, "run": case.extra.get("run")},
                                  [(case, None)] if raised else same_run, "the result", raised,
                                  ctx.workspace, truth, compared)
        return replace(found, keep_hint=named) if found is not None else None

    def plan(ctx: Context) -> Plan:
        cases = _cases(maker, ctx)
        valid = [c for c in cases if not c.extra.get("malformed")]
        truth_of = _once_per_case(truth)  # made now and read again by the judge
        for case in valid:  # now, in the judge: a child forked after it inherits its imports
            truth_of(case)

        def compared(tree: dict[str, Any]) -> dict[str, Any]:
            """The observations of `tree` (a run's, or the truth's) this check compares, one
            level deep."""
            shown = select(tree, fields)
            return _flat(select(shown, [k for k in shown if k not in limits]))

        def judge(observed: list[Observation]) -> Verdict:
            wrong: list[tuple[Case, Any]] = []
            first: tuple[str, str | None] | None = None
            answered: list[tuple[Case, Any]] = []
            for case, run in zip(cases, observed, strict=True):
                if case.extra.get("malformed"):
                    continue
                if run["raised"] is not None:
                    wrong.append((case, {"raised": run["raised"]}))
                    known = explain_error(spec.round, run["raised"]["message"])
                    first = first or (f"{case.describe()}: raised {format_raised(run['raised'])}",
                                      known[1] if known else
                                      known_error_hint(run["raised"]) or hint)
                    continue
                actual = compared(run["value"])
                difference = _over(select(run["value"], fields), limits) or tree_difference(
                    actual, compared(truth_of(case)), case.dtype, "the result")
                if difference:
                    wrong.append((case, run["value"]))
                    answered.append((case, actual))
                    first = first or (f"{case.describe()}: {difference} ({ctx.reproduce()})",
                                      None)
            if first is not None:
                named = diagnose(wrong, mistakes)
                recipe = first[1] or hint
                if named is None and first[1] is None:  # what holds of the wrong answers
                    recipe = _known(valid, [o for c, o in zip(cases, observed, strict=True)
                                            if not c.extra.get("malformed")], answered,
                                    lambda c: compared(truth_of(c)), "the result", hint)
                verdict = failed(first[0], hint=named or recipe)
                # A run that answered otherwise than the truth is evidence against how the
                # part's values were made (the checks a row's `voids` names), where those values
                # were right (a part that updates nothing moves no version counter either); a
                # raise is no evidence.
                verdict = replace(verdict, diagnosis=differential(ctx, wrong, named is not None,
                                                                  truth_of, compared))
                return replace(verdict, voids=True, otherwise=verdict) if answered else verdict
            for case, run in zip(cases, observed, strict=True):
                if case.extra.get("malformed") and (
                        run["raised"] is None or "ValueError" not in run["raised"]["bases"]):
                    what = "returned normally" if run["raised"] is None else \
                        f"raised {format_raised(run['raised'])}"
                    return failed(f"{case.label}: {what}; expected ValueError",
                                  hint=validation_hint)
            checked = len(cases) - len(valid)
            rejected = f"; ValueError for all {checked} malformed inputs" if checked else ""
            return passed(f"{len(valid)} cases matched ({span(valid)}){rejected}")

        return Plan("run_each", {"cases": [c.data() for c in cases]}, judge)

    return plan


# --- two runs of the candidate that must agree --------------------------------------------------


def runs_agree(spec: Spec) -> PlanFactory:
    """Two runs of the candidate's own code on one case, under conditions that must not change
    the answer (a backward called twice on one cache, the caller's arrays refilled in between),
    give the same result: compared with each other, not with a truth, so that code wrong for
    another reason is the correctness checks' to name. `run` (probes.py, the plan's probe)
    returns {"raised", "first", "second"}; `options` go to it as keyword arguments;
    `condition` says what the second run changed, `failure` words a difference."""
    maker, run, options = spec.maker("case"), spec.helper("run"), spec.value("options", {})
    if run is None:
        raise RoundError(f"{spec.where}: missing run")
    if not isinstance(options, dict) or "case" in options:
        raise RoundError(f"{spec.where}: options must be a table of the run's other arguments")
    condition, failure = spec.text("condition", None), spec.text("failure")
    name, agreed, hint = spec.text("name", "the second run"), spec.text("passed"), spec.text("hint")
    if "{difference}" not in failure:
        raise RoundError(f"{spec.where}: failure must say where the {{difference}} goes")

    def plan(ctx: Context) -> Plan:
        (case,) = _cases(maker, ctx)
        where = case.describe() + (f", {condition}" if condition else "")

        def judge(obs: Observation) -> Verdict:
            if obs["raised"]:
                return raised_verdict(where, obs["raised"])
            with np.errstate(all="ignore"):
                difference = tree_difference(obs["second"], obs["first"], case.dtype, name,
                                             alike=True)
            if difference:
                return failed(failure.format(where=where, difference=difference), hint=hint)
            return passed(agreed)

        return Plan(f"round:{run}", {**options, "case": case.data()}, judge)

    return plan


# --- complexity by op count, and by CPU time measured outside the child --------------------

MEASURES = {"flops": "matmul flops", "operations": "array operations",
            "products": "elementwise products"}
"""What the complexity kind counts: the work (a cost of the wrong order: matmul flops, or the
elements every elementwise multiplication produces), or every operation (with exponent 0: a
Python loop over a batch makes more of them as the batch grows)."""


@dataclass(frozen=True)
class CountRule:
    """How a count at two growing sizes is judged: it may grow like the size to the power
    `exponent` (with 50% to spare), and, given a `budget`, stay within it at the larger size."""

    size: str
    exponent: float
    measure: str
    budget: Callable[[Case], int] | None
    growth_hint: str
    budget_hint: str | None

    @classmethod
    def read(cls, spec: Spec) -> CountRule:
        measure = spec.text("measure", "flops")
        if measure not in MEASURES:
            raise RoundError(f"{spec.where}: measure must be one of {', '.join(MEASURES)}")
        return cls(spec.text("size"), spec.number("exponent", 1.0), measure,
                   spec.maker("budget", None), spec.text("growth_hint"),
                   spec.text("budget_hint", None))

    @property
    def counted(self) -> str:
        return MEASURES[self.measure]

    def judge(self, small: Case, large: Case, low: int, high: int) -> Verdict:
        """Passed, failed, or skipped when the counter saw nothing at all."""
        size, counted = self.size, self.counted
        n_small, n_large = small.dim(size), large.dim(size)
        if low == 0 or high == 0:
            return skipped(f"no {counted} were visible to the counter (were the inputs "
                           "converted, e.g. with np.asarray?), so the cost was not measured")
        growth = high / low
        summary = (f"{counted}: {low} at {size}={n_small}, {high} at {size}={n_large} "
                   f"(x{growth:.1f} for x{n_large // n_small} {size})")
        if growth > 1.5 * (n_large / n_small) ** self.exponent:
            return failed(f"{summary}: {_too_fast(self.exponent, size)}", hint=self.growth_hint)
        allowed = self.budget(large) if self.budget else None
        if allowed is not None and high > allowed:
            return failed(summary + f": more than 4x the reference's {allowed // 4} flops",
                          hint=self.budget_hint)
        return passed(summary)


def complexity(spec: Spec) -> PlanFactory:
    """A count at growing sizes (matmul flops, or array operations): the growth must be that
    of the expected order, and every counted call must answer as the reference does on the
    same case (run in a process of its own as the baseline): code that tells the counter's
    calls apart (its wrapped arrays, its mode, its stack) and answers them without the work
    gets its count judged on an answer that is wrong, which fails."""
    maker, function, args = spec.maker("cases"), spec.text("function"), spec.names("args")
    call, rule, watched = spec.helper("call"), CountRule.read(spec), spec.flag("no_autograd")
    folder = str(spec.round.folder)

    def plan(ctx: Context) -> Plan:
        cases = _cases(maker, ctx)
        probe_args = {"function": function, "args": args, "call": call,
                      "measure": rule.measure, "cases": [c.data() for c in cases],
                      "nonce": int(ctx.rng().integers(2**62))}

        def judge(obs: Observation) -> Verdict:
            yours = obs["yours"]
            if yours.get("autograd"):
                return autograd_seen("your calls under the counter")
            counted = rule.judge(cases[0], cases[-1], yours["counts"][0], yours["counts"][-1])
            wrong = _unmatched_counts(cases, yours, obs["baseline"])
            if not wrong:
                return counted
            said = (f"{cases[wrong[0]].describe()}: the answer of the call under the counter "
                    "differs from the reference's on the same inputs, so its count is not the "
                    "cost of the work")
            return replace(failed(said, hint=WATCHED_ANSWERS_HINT), by_values=True,
                           otherwise=counted, recheck=_recheck_projections(
                               probe_args, [(cases[i], yours["projections"][i]) for i in wrong]))

        return Plan("cost_counts", {**probe_args, "watch": watched}, judge, watched=watched,
                    baseline=("cost_counts", {**probe_args,
                                              "reference": [folder, ctx.part_id]}))

    return plan


def _unmatched_counts(cases: Sequence[Case], yours: Observation,
                      reference: Observation | None) -> list[int]:
    """The counted calls of the candidate's whose answers differ from the reference's on the
    same cases, by index; none where the reference gave none (the counts then decide alone)."""
    if reference is None:
        return []
    return [index for index, (case, got, expected) in enumerate(zip(
            cases, yours.get("projections") or [], reference.get("projections") or [],
            strict=False)) if projection_differs(got, expected, _projection_rtol(case))]


def _projection_rtol(case: Case) -> float:
    return TIMED_RTOL["float32" if _has_float32(case) else "float64"]


def _recheck_projections(probe_args: dict[str, Any],
                         watched: list[tuple[Case, list[float] | None]]) -> Recheck:
    """The Recheck of the counted calls that answered otherwise than the reference (each case
    and its projection): the same calls made the plain way (probes.library.plain_projections),
    each projection held to its counted one."""
    def same(case: Case, row: Observation, projection: list[float] | None) -> bool:
        return projection is not None and not projection_differs(
            row.get("projection"), projection, _projection_rtol(case))

    args = {key: probe_args[key] for key in ("function", "args", "call", "nonce")}
    return _recheck("plain_projections", args, watched, same)


def autograd_seen(where: str, at: str = "") -> Verdict:
    """The verdict of a check with `no_autograd = true` whose watch saw autograd run `where`
    (`at` a size, as "at N = 8 "): a backward by hand runs none, in any call, and the checks
    the table says this one voids (the part's values) lose their points."""
    return replace(failed(f"{at}autograd ran inside {where}, watched as the check that looks "
                          "for autograd watches", hint=AUTOGRAD_RAN_HINT), voids=True)


def _too_fast(exponent: float, size: str) -> str:
    if exponent == 0:
        return f"the count grows with {size}"
    order = {1.0: "linearly", 2.0: "quadratically"}.get(exponent, f"as the power {exponent:g}")
    return f"the cost grows faster than {order} in {size}"


def _repeats(spec: Spec) -> dict[str, int] | int:
    """`repeats`: calls per run, one number or one per flavor (numpy's calls are cheaper)."""
    value = spec.value("repeats")
    numbers = value.values() if isinstance(value, dict) else [value]
    if not all(isinstance(v, int) and not isinstance(v, bool) and v > 0 for v in numbers):
        raise RoundError(f"{spec.where}: repeats must be a positive whole number, or a table of "
                         "them by flavor")
    return cast(dict[str, int] | int, value)


def cpu_growth(spec: Spec) -> PlanFactory:
    """The complexity check, measured in rounds at three sizes (a tiny one, then two growing).

    In each run's own process the counter sees one call (the precise hint, when it sees the
    work), then `repeats` more calls run; the CPU time the kernel charged that process is read
    by its parent. The same runs of the reference, each just before the candidate's, in
    processes without candidate code, give the yardstick: the candidate's work (beyond the
    tiny run's) may grow at most `limit` times faster than the reference's from the middle
    size to the large one, and cost at most `large_limit` times the reference's per call at the
    large size (padding the smaller sizes' work flattens a growth, never the large size's
    cost). Work hidden from the counter (aten ops, numpy behind a torch tensor,
    the counter switched off) still costs CPU time; work the counter cannot see but that grows
    right passes. Where the CPU times cannot be compared (the reference failed, or its work did
    not grow measurably), the counter alone decides, as in the complexity kind. A verdict from
    CPU time holds only when the rounds agree on it (decide_growth).

    With `no_autograd = true` (a backward by hand) the call under the counter also runs under
    the no_autograd kind's watch, and autograd seen there fails the check: code that tells the
    watched call apart (its stack, its modes) and answers it without autograd but uses
    autograd elsewhere meets the watch here too, where answering without autograd by a forward
    per entry costs what the cap stops."""
    maker, function, args = spec.maker("cases"), spec.text("function"), spec.names("args")
    call, rule = spec.helper("call"), CountRule.read(spec)
    watched = spec.flag("no_autograd")
    repeats, limit = _repeats(spec), spec.number("limit", 2.5)
    limits = Limits(limit, spec.number("large_limit", LARGE_RUN_LIMIT),
                    spec.text("large_hint", None))
    shares = spec.number("middle_calls", 4.0), spec.number("large_calls", 0.5)
    if min(shares) <= 0:
        raise RoundError(f"{spec.where}: middle_calls and large_calls must be above 0")
    if rule.exponent <= 0:
        raise RoundError(f"{spec.where}: CPU time measures work that grows: exponent must be "
                         "above 0")
    folder = str(spec.round.folder)

    def plan(ctx: Context) -> Plan:
        cases = _cases(maker, ctx)
        if len(cases) != 3:
            raise RoundError(f"{spec.where}: cases must make three cases (a tiny size, then "
                             f"two growing ones), not {len(cases)}")
        calls = Calls.of(repeats[ctx.flavor] if isinstance(repeats, dict) else repeats,
                         *shares)
        probe_args = {"function": function, "args": args, "call": call,
                      "measure": rule.measure, "watch": watched}
        rng = ctx.rng()
        # Each process gets inputs of its own (a nonce per run, the reference's run the same):
        # nothing one process kept, in memory or in a file, answers another's calls.
        rounds = tuple(tuple({"case": case.data(), "nonce": int(rng.integers(2**62)),
                              "repeats": count} for case, count in _round(cases, calls, number))
                       for number in range(GROWTH_ROUNDS))
        return Plan("timed_calls", probe_args,
                    lambda both: judge_growth(rule, cases, calls, limits, both),
                    baseline=("timed_calls", {**probe_args, "reference": [folder, ctx.part_id]}),
                    measured=Measured(rounds, least=DECIDING_ROUNDS,
                                      cap=growth_cap(_expected(rule, cases), calls, limits),
                                      early=partial(early_growth, rule, cases, calls,
                                                    limits)),
                    watched=watched)

    return plan


LARGE_RUN_LIMIT = 10.0
"""How many times the reference's work per call at the large size a candidate's may cost by
default: honest code of the right order costs up to about 5 times the reference's there."""


@dataclass(frozen=True)
class Limits:
    """A cpu_growth check's two limits: on the growth of the work per call from the middle size
    to the large one (`growth`, times the reference's) and on the work per call at the large
    size (`large`, times the reference's), with the hint for the latter (`large_hint`; the
    growth's hint where none is given)."""

    growth: float
    large: float
    large_hint: str | None = None


@dataclass(frozen=True)
class Calls:
    """How many calls each timed run makes: the tiny and the middle size `middle_calls` times
    the table's `repeats` (4 by default), the tiny and the large size `large_calls` times it
    (0.5): the middle size's work then stands well above a process's noise, and the large
    one's costs little."""

    middle: int
    large: int

    @classmethod
    def of(cls, repeats: int, middle_share: float, large_share: float) -> Calls:
        return cls(max(1, round(middle_share * repeats)), max(1, round(large_share * repeats)))


def _round(cases: Sequence[Case], calls: Calls, number: int) -> list[tuple[Case, int]]:
    """Round `number`'s runs, (case, calls): in the first, one call under the counter at the
    two growing sizes (whose CPU time is not used); then, in every round, the tiny size and the
    middle one at the middle's number of calls, the tiny size and the large one at the
    large's."""
    tiny, middle, large = cases
    counted = [(middle, 0), (large, 0)] if number == 0 else []
    return counted + [(tiny, calls.middle), (middle, calls.middle), (tiny, calls.large),
                      (large, calls.large)]


def counted_growth(rule: CountRule, cases: Sequence[Case], calls: Calls,
                   so_far: dict[str, Any]) -> Verdict | None:
    """The cpu_growth verdict that no timed run can change, as soon as the runs so far show
    it: a call that raised, a call under the counter stopped at its cap, or a count that grows
    too fast (judge_growth puts all three before every CPU time); None while they decide
    nothing."""
    decided = _before_timing(rule, cases, calls, so_far)
    if decided:
        return decided
    counted = so_far["yours"][0][:COUNTED_RUNS]
    if len(counted) < COUNTED_RUNS or any(run["data"] is None for run in counted):
        return None
    verdict = rule.judge(cases[1], cases[2], *(run["data"]["count"] for run in counted))
    if verdict.status != "failed":
        return None
    return _also(verdict, "CPU time not measured: the count alone decides")


def early_growth(rule: CountRule, cases: Sequence[Case], calls: Calls, limits: Limits,
                 so_far: dict[str, Any]) -> Verdict | None:
    """The cpu_growth verdict before its rounds are in: the count's (counted_growth), or, once
    the first round is, a pass that its CPU times show with room to spare (settled's `clear`).
    A failure always waits for the rounds that settle it."""
    decided = counted_growth(rule, cases, calls, so_far)
    if decided is not None:
        return replace(decided, alone=_of_cost(decided, cases, calls, so_far))
    first = _round(cases, calls, 0)
    rounds, reference = so_far["yours"], so_far["baseline"]
    if len(rounds) != 1 or len(rounds[0]) != len(first) or not reference \
            or len(reference[0]) != len(first):
        return None
    verdict = judge_growth(rule, cases, calls, limits, so_far)
    return verdict if verdict.status == "passed" else None


def _before_timing(rule: CountRule, cases: Sequence[Case], calls: Calls,
                   so_far: dict[str, Any]) -> Verdict | None:
    """The failures no CPU time can change, in the order judged: a call that raised, a call
    under the counter stopped at its cap, autograd seen in a watched call."""
    return _raised(cases, calls, so_far["yours"]) or _stopped_counting(rule, cases, so_far) \
        or _autograd_counted(rule, cases, calls, so_far)


def _stopped_counting(rule: CountRule, cases: Sequence[Case],
                      so_far: dict[str, Any]) -> Verdict | None:
    """The verdict on a call under the counter that was stopped at its cap (growth_cap): one
    call costing many times the reference's process making the same call is work of another
    order (a forward per entry, a closed form), whatever the timed rounds would show, and the
    growth's hint names it."""
    theirs = (so_far["baseline"] or [[]])[0]
    for index, (case, run) in enumerate(zip(cases[1:], so_far["yours"][0][:COUNTED_RUNS],
                                            strict=False)):
        if run.get("capped"):
            reference = f" ({theirs[index]['cpu_s']:.3f} s of CPU)" if index < len(theirs) \
                else ""
            return failed(f"at {rule.size} = {case.dim(rule.size)} one call of yours, under the "
                          f"counter, cost more than {COUNTED_RUN_LIMIT:g}x the reference's "
                          f"process making the same call{reference} and was stopped at "
                          f"{run['cpu_s']:.2f} s: its work there is many times the reference's",
                          hint=rule.growth_hint)
    return None


def _autograd_counted(rule: CountRule, cases: Sequence[Case], calls: Calls,
                      so_far: dict[str, Any]) -> Verdict | None:
    """The verdict on a run in which the autograd watch (the call under the counter) or the
    spy on autograd's engine (every timed call) saw autograd run, in a check with
    `no_autograd = true`: a backward by hand runs none, in any call, and the checks the table
    says this one voids (the part's values) lose their points."""
    for number, runs in enumerate(so_far["yours"]):
        for (case, repeats), run in zip(_round(cases, calls, number), runs, strict=False):
            if run["data"] and run["data"].get("autograd"):
                where = "one of your timed calls" if repeats else "your call under the counter"
                return autograd_seen(where, f"at {rule.size} = {case.dim(rule.size)} ")
    return None


AUTOGRAD_AT_IMPORT_HINT = ("A backward by hand computes its gradients from their formulas, "
                           "in the call: no autograd at import either (a test of your own "
                           "belongs under `if __name__ == \"__main__\":`).")
AUTOGRAD_RAN_HINT = ("This backward is written by hand, in every call: no requires_grad, "
                     "backward() or autograd.grad, whether or not a call looks watched. Compute "
                     "the gradients from their formulas.")


def _raised(cases: Sequence[Case], calls: Calls,
            rounds: Sequence[Sequence[dict[str, Any]]]) -> Verdict | None:
    """The verdict on the first of the candidate's timed runs that raised, if one did."""
    for number, runs in enumerate(rounds):
        # The current round's runs to date: fewer than its entries.
        for run, (case, _) in zip(runs, _round(cases, calls, number), strict=False):
            if run["data"] and run["data"]["raised"]:
                return raised_verdict(case.describe(), run["data"]["raised"])
    return None


def judge_growth(rule: CountRule, cases: Sequence[Case], calls: Calls, limits: Limits,
                 both: dict[str, Any]) -> Verdict:
    """The cpu_growth kind's verdict (_judged_growth). A failure of cost stands alone: the
    checks of values named in `after` explain a call that raised or a timed call's wrong
    result, not a cost."""
    verdict = _judged_growth(rule, cases, calls, limits, both)
    return replace(verdict, alone=_of_cost(verdict, cases, calls, both))


def _of_cost(verdict: Verdict, cases: Sequence[Case], calls: Calls,
             so_far: dict[str, Any]) -> bool:
    """Whether a cpu_growth verdict is a failure of cost, not of values (see judge_growth)."""
    return verdict.status == "failed" and verdict.hint != TIMED_RESULTS_HINT \
        and _raised(cases, calls, so_far["yours"]) is None


def _judged_growth(rule: CountRule, cases: Sequence[Case], calls: Calls, limits: Limits,
                   both: dict[str, Any]) -> Verdict:
    """The counter's failure (the precise one) first, then the CPU times' growth and large-size
    cost against the reference's, then the counter's pass."""
    rounds = both["yours"]
    decided = _before_timing(rule, cases, calls, both)
    if decided:
        return decided
    middle_count, large_count = (run["data"]["count"] for run in rounds[0][:COUNTED_RUNS])
    counted = rule.judge(cases[1], cases[2], middle_count, large_count)
    reference = both["baseline"]
    raised = next((run["data"]["raised"] for runs in reference or [] for run in runs
                   if run["data"]["raised"]), None)
    if reference is None or raised:
        why = both["baseline_error"] or (format_raised(raised) if raised else "no result")
        return _also(counted, f"CPU time not compared: the reference could not be run ({why})")
    for number, (mine, theirs) in enumerate(zip(rounds, reference, strict=True)):
        pairs = [(c, m["data"], t["data"])
                 for (c, _), m, t in zip(_round(cases, calls, number), mine, theirs, strict=True)
                 if m["data"] is not None]
        unmatched = _unmatched_call([c for c, _, _ in pairs], [m for _, m, _ in pairs],
                                    [t for _, _, t in pairs])
        if unmatched:
            return failed(unmatched, hint=TIMED_RESULTS_HINT)
    sizes = tuple(c.dim(rule.size) for c in cases)
    expected = _expected(rule, cases)
    # The estimate after each round so far; the last is over all of them.
    so_far = [compare(_least_per_size(rounds[:n], calls),
                      _least_per_size(reference[:n], calls), expected)
              for n in range(1, len(rounds) + 1)]
    costs = [_large_cost(_least_per_size(rounds[:n], calls), _least_per_size(reference[:n], calls))
             for n in range(1, len(rounds) + 1)]
    mine, theirs, growth = (_least_per_size(rounds, calls), _least_per_size(reference, calls),
                            so_far[-1])
    summary = _cpu_summary(rule.size, sizes, mine, theirs, growth, expected, costs[-1])
    fixed = mine.tiny if mine.tiny_large is None else mine.tiny_large
    if all(any(run.get("capped") for run in runs[-4:-1]) for runs in rounds):
        if not any(runs[i].get("capped") for runs in rounds for i in (-4, -2)):
            # The tiny runs cost what the reference's do: the middle size's work is the cost.
            return failed(f"{summary}: at {rule.size} = {sizes[1]} yours cost more than "
                          f"{SMALL_RUN_LIMIT:g}x the reference's process making the same calls, "
                          "in every round, where its runs at "
                          f"{rule.size} = {sizes[0]} did not: its work there is many times the "
                          "reference's", hint=limits.large_hint or rule.growth_hint)
        return failed(f"{summary}: at the smaller sizes yours cost more than "
                      f"{SMALL_RUN_LIMIT:g}x the reference's process making the same calls, "
                      "in every round, and under that much fixed cost no growth can be "
                      "measured", hint=OVERHEAD_HINT)
    if theirs.large > 0 and fixed > OVERHEAD_LIMIT * theirs.large:
        return failed(f"{summary}: at {rule.size} = {sizes[0]} yours already costs "
                      f"{fixed / theirs.large:.0f}x the reference's at {rule.size} = "
                      f"{sizes[2]} (at most {OVERHEAD_LIMIT:g}x), and under that much fixed cost "
                      "no growth can be measured", hint=OVERHEAD_HINT)
    if growth is None:
        return _also(counted, f"{summary}: not compared, the reference's work did not show")
    if counted.status == "failed":
        return _also(counted, summary)
    unseen = (f"the counter saw no {rule.counted}" if counted.status == "skipped" else
              f"the {rule.counted} the counter saw grew slower")
    if len(rounds) >= DECIDING_ROUNDS and all(runs[-1].get("capped") for runs in rounds):
        # A stopped run is a lower bound: pooled with other rounds' runs it would read as a
        # growth near the limit. Stopped in every round, it is past the cap's; which limit
        # the cap stood for (the same in every round, or either) says which hint applies, as
        # it would had the run been let finish.
        bounds = {_large_bound(runs, theirs, calls, limits, expected)
                  for runs, theirs in zip(rounds, reference, strict=True)}
        if growth.excess > limits.growth:
            # The growth up to where the run was stopped, a lower bound, is past its own limit
            # already: however the cap fell (a busy machine slows the middle run and moves it),
            # the growth fails too, and its hint is the one that names the mistake.
            bounds.add("growth")
        if bounds == {"cost"}:
            past = f"code costing {CAP_MARGIN * limits.large:g}x its work per call there"
        elif bounds == {"growth"}:
            past = f"code growing {CAP_MARGIN * limits.growth:g}x faster than the reference's"
        else:
            past = (f"code growing {CAP_MARGIN * limits.growth:g}x faster than the "
                    f"reference's, or costing {CAP_MARGIN * limits.large:g}x its work per call "
                    "there")
        hint = limits.large_hint if bounds == {"cost"} and limits.large_hint else \
            rule.growth_hint
        return failed(f"{summary}: at {rule.size} = {sizes[2]} yours was stopped in every "
                      f"round, once it had cost more than {past} could; {unseen}, so the work "
                      "is in calls it cannot see", hint=hint)
    noisy = _noisy(reference)
    growths = [None if g is None else g.excess for g in so_far]
    grows = settled(growths, limits.growth, noisy, clear=True)
    costs_more = settled(costs, limits.large, noisy, clear=True)
    if costs_more and grows is None and all(g is not None and g > limits.growth for g in growths):
        # The cost settles the failure; a growth past its limit in every round, though not yet
        # by the margin a busy machine needs, says why, as it would once settled: which limit
        # names the mistake must not hang on which estimate a busy machine let settle first.
        grows = True
    if grows:
        return failed(f"{summary}: yours grows {growth.excess:.1f}x faster than the "
                      f"reference's (at most {limits.growth:g}x allowed); {unseen}, so the work "
                      "is in calls it cannot see", hint=rule.growth_hint)
    if costs_more:
        return failed(f"{summary}: at {rule.size} = {sizes[2]} your work per call costs "
                      f"{costs[-1]:.1f}x the reference's (at most {limits.large:g}x allowed); "
                      f"{unseen}", hint=limits.large_hint or rule.growth_hint)
    unsettled = [(what, limit, estimates) for what, limit, estimates, verdict in (
        (f"yours grows {growth.excess:.1f}x faster than the reference's", limits.growth,
         growths, grows),
        (f"yours costs {_times(costs[-1])} the reference's work per call at {rule.size} = "
         f"{sizes[2]}", limits.large, costs, costs_more)) if verdict is None]
    # Of two estimates not settled yet, the one that has stayed within its limit is not the
    # question.
    in_question = [(what, limit, estimates) for what, limit, estimates in unsettled
                   if any(e is None or e > limit for e in estimates)] or unsettled
    if in_question:
        return undecided(f"{summary}: " + "; ".join(
            f"{what}, but as rounds came in the estimate did not settle on one side of the "
            f"limit ({limit:g}x): " + ", ".join(
                "not measurable" if e is None else f"{e:.1f}x" for e in estimates)
            for what, limit, estimates in in_question))
    if counted.status == "skipped":
        return passed(f"{summary} (the counter saw no {rule.counted}: CPU time decides)")
    return passed(f"{counted.message}; {summary}")


COUNTED_RUNS = 2
"""The first round's runs before its timed ones (see _round), so that the timed runs of every
round may be stopped at the cap without losing what the counter saw."""


def _expected(rule: CountRule, cases: Sequence[Case]) -> float:
    """The expected order's own growth of the work from the middle size to the large one."""
    tiny, middle, large = (math.pow(c.dim(rule.size), rule.exponent) for c in cases)
    return (large - tiny) / (middle - tiny)


def growth_cap(expected: float, calls: Calls,
               limits: Limits) -> Callable[[dict[str, Any]], float | None]:
    """The CPU seconds past which a candidate's run cannot change its round's verdict (see
    Measured.cap): at the large size, the lesser of the cost whose growth per call over the
    round's middle run is CAP_MARGIN times the growth limit past the fastest growth the
    reference can count for (whatever floor the middle work gets) and the cost of CAP_MARGIN
    times the large-size limit on the reference's work per call there, so that a stopped run
    is a failing round; at the
    smaller sizes, SMALL_RUN_LIMIT times the reference's run of the same size and calls, just
    before (judge_growth fails a candidate stopped there in every round). Once the round's
    middle run was stopped, its growth is unknown and only the large-size limit's cost stops the
    large run; once the tiny run before it was, its fixed cost is unknown too, and the small
    runs' limit stops it. A call under the counter (the first round's first runs) is stopped at
    COUNTED_RUN_LIMIT times the reference's process making the same call."""
    def cap(so_far: dict[str, Any]) -> float | None:
        yours, theirs = so_far["yours"], so_far["baseline"]
        if not theirs:
            return None
        if len(yours) == 1 and len(yours[0]) < COUNTED_RUNS:
            # A call under the counter: the reference's process of the same call, just before.
            index = len(yours[0])
            return COUNTED_RUN_LIMIT * float(theirs[0][index]["cpu_s"]) \
                if len(theirs[0]) == index + 1 else None
        counted = COUNTED_RUNS if len(yours) == 1 else 0
        current, reference = yours[-1][counted:], theirs[-1][counted:]
        if len(yours[-1]) < counted or len(reference) != len(current) + 1:
            return None
        small_cap = SMALL_RUN_LIMIT * float(reference[-1]["cpu_s"])
        if len(current) < 3 or current[-1].get("capped"):
            return small_cap
        tiny_large = float(current[2]["cpu_s"])
        grown, costly = _large_caps(current, reference, calls, limits, expected)
        if grown is None:
            # The middle run's work per call is unknown: only the large size's own cost
            # limit bounds this run.
            return min(small_cap, tiny_large + costly * calls.large) if costly > 0 else small_cap
        if grown <= 0:
            return None
        return tiny_large + (min(grown, costly) if costly > 0 else grown) * calls.large

    return cap


def _large_caps(current: Sequence[dict[str, Any]], reference: Sequence[dict[str, Any]],
                calls: Calls, limits: Limits, expected: float) -> tuple[float | None, float]:
    """A round's two bounds on the candidate's work per call at the large size (see
    growth_cap), from its runs at the smaller sizes (`current`, the round's timed runs from its
    tiny one on) and the reference's: the work that growing CAP_MARGIN times the growth limit
    past the reference's fastest countable growth would reach (None where the middle run was
    stopped and its work is unknown), and CAP_MARGIN times the large-size limit's cost."""
    timed = _least_per_size([reference[:4]], calls)
    costly = CAP_MARGIN * limits.large * timed.work()[1]
    if any(run.get("capped") for run in current[:3]):
        return None, costly
    tiny, middle = (float(run["cpu_s"]) for run in current[:2])
    floor = FLOOR_SHARE * FLOOR * timed.work()[1] / expected
    work = max((middle - tiny) / calls.middle, floor)
    return CAP_MARGIN * limits.growth * CEILING * expected * work, costly


def _large_bound(runs: Sequence[dict[str, Any]], reference: Sequence[dict[str, Any]],
                 calls: Calls, limits: Limits, expected: float) -> Literal["growth", "cost"]:
    """Which limit a round's stopped large run was stopped at: the large-size cost's where its
    bound was the lower (or the only one), else the growth's."""
    grown, costly = _large_caps(runs[-4:], reference[-4:], calls, limits, expected)
    return "cost" if grown is None or 0 < costly <= grown else "growth"


COUNTED_RUN_LIMIT = 50.0
"""How many times the reference's process making the same call a candidate's call under the
counter may cost before it is stopped. The counter and the autograd watch cost something per
operation, which falls on code that makes many (a loop over rows makes thousands where the
reference makes two): such honest loops cost up to about 12 times the reference's process
there; a forward per input entry costs hundreds of times more, and at the large size would
run for minutes."""
SMALL_RUN_LIMIT = 10.0
"""How many times the reference's process at the same small size and number of calls a
candidate's may cost: honest code costs at most about 3 times the reference's (an einsum per
product in numpy, at prefix-products' middle size); a process started per call, a sleep spun on
the CPU, or work padded to a size of its own costs far more."""
CAP_MARGIN = 1.5
"""How far past the failing cost a run is let go before it is stopped."""


def _noisy(reference: Sequence[Sequence[dict[str, Any]]]) -> bool:
    """Whether the reference's runs at the middle or the large size spread like a busy
    machine's. They run no candidate code, each just before the candidate's run of the same
    size, so their spread is the machine's; the candidate's own runs spreading beside tight
    ones of the reference's is the code's doing (work padded onto a random share of its
    processes), which earns no allowance for noise: its least time per size is judged as on a
    quiet machine."""
    return spread_out([run[size]["cpu_s"] for run in reference if not run[size].get("capped")]
                      for size in (-3, -1))


GROWTH_ROUNDS = 5
"""The most rounds (four timed runs each, see _round, the reference's run before each of
yours) a growth is measured over; a quiet machine decides it after DECIDING_ROUNDS."""


def _least_per_size(rounds: Sequence[Sequence[dict[str, Any]]], calls: Calls) -> Timings:
    """The least CPU time of each timed run over the rounds (each round's last four: tiny and
    middle, tiny and large): a process is only ever charged more than its work (a loaded
    machine's cache and scheduler noise add, never take away), so the least is the closest."""
    tiny, middle, tiny_large, large = (min(runs[run - 4]["cpu_s"] for runs in rounds)
                                       for run in range(4))
    return Timings(tiny, middle, large, tiny_large, calls.middle, calls.large)


OVERHEAD_LIMIT = 10.0
"""How many times the reference's cost at the largest size a candidate's process may cost at
the tiniest: a fixed cost far above the work (a process started per call, a sleep spun on the
CPU) would hide any growth in the noise of its own."""
OVERHEAD_HINT = ("Each call should cost little more than its work: no process started per "
                 "call, no busy waiting, nothing recomputed that does not depend on the inputs.")
TIMED_RESULTS_HINT = ("Every timed call gets inputs of its own and its result is checked: "
                      "compute each result from its own inputs, with no cache across calls.")


def _unmatched_call(cases: Sequence[Case], yours: list[dict[str, Any]],
                    reference: list[dict[str, Any]]) -> str:
    """What differs between the results of the candidate's timed calls and the reference's on
    the same fresh inputs (each call's projection, see probes.library.timed_calls); "" when
    every call matches. A cost is only measured on work that gave the right answers."""
    for index, (mine, theirs) in enumerate(zip(yours, reference, strict=True)):
        case = cases[index % len(cases)]
        rtol = _projection_rtol(case)
        expected = theirs.get("projections") or []
        got = mine.get("projections") or []
        if len(got) != len(expected):
            return (f"{case.describe()}: {len(got)} of the {len(expected)} timed calls gave a "
                    "result")
        call = first_unmatched(got, expected, rtol)
        if call is not None:
            which = "the first call" if call == 0 else f"timed call {call + 1}"
            return (f"{case.describe()}: the result of {which} (on inputs of its own) "
                    "differs from the reference's on the same inputs, so the time it took "
                    "is not the cost of the work")
    return ""


TIMED_RTOL = {"float64": 1e-7, "float32": 2e-3}


def _has_float32(case: Case) -> bool:
    return case.dtype == "float32" or any(
        getattr(a, "dtype", None) == np.float32 for a in case.inputs.values())


def projection_differs(got: list[float] | None, expected: list[float] | None,
                        rtol: float) -> bool:
    """Whether a call's answer (its projection, see probes.library.projection) differs from
    the reference's; never where the reference's is not one."""
    if expected is None:
        return False
    return got is None or not _close(got[0], expected[0], rtol * max(expected[1], got[1]) + 1e-12)


def first_unmatched(got: Sequence[list[float] | None], expected: Sequence[list[float] | None],
                    rtol: float) -> int | None:
    """The first of a run of calls whose answer (a projection) differs from the reference's
    same call (see projection_differs); None where every call both made agrees."""
    return next((call for call, (a, b) in enumerate(zip(got, expected, strict=False))
                 if projection_differs(a, b, rtol)), None)


def _close(a: float, b: float, tol: float) -> bool:
    return math.isfinite(a) and abs(a - b) <= tol


def _also(verdict: Verdict, note: str) -> Verdict:
    """The verdict with a note on what else was (or was not) measured."""
    return Verdict(verdict.status, f"{verdict.message}\n{note}", verdict.hint, verdict.fraction,
                   verdict.not_applicable, verdict.stub)


def _large_cost(mine: Timings, theirs: Timings) -> float | None:
    """How many times the reference's work per call at the large size the candidate's costs;
    None when the reference's did not show there."""
    reference = theirs.work()[1]
    return mine.work()[1] / reference if reference > 0 else None


def _times(ratio: float | None) -> str:
    """A ratio of costs in words; one below zero (a call at the large size that cost less than
    one at the tiny size, within a process's noise) reads as what it is, none."""
    return "an unmeasurable share of" if ratio is None else f"{max(ratio, 0.0):.1f}x"


def _cpu_summary(size: str, sizes: tuple[int, ...], mine: Timings, theirs: Timings,
                 growth: Growth | None, expected: float, cost: float | None) -> str:
    tiny, middle, large = sizes

    def seconds(t: Timings) -> str:
        return f"{t.tiny:.3f} and {t.middle:.3f}, {t.tiny_large:.3f} and {t.large:.3f}"

    times = (f"CPU seconds of one process each ({size} = {tiny} and {middle}, "
             f"{mine.middle_calls} calls each; {size} = {tiny} and {large}, {mine.large_calls} "
             f"calls each): yours {seconds(mine)}; the reference's {seconds(theirs)}")
    if growth is None:
        return times
    work = theirs.work()
    measured = f"x{work[1] / work[0]:.1f}" if work[0] > 0 else "not measurable"
    counted = f"x{growth.reference:.1f}"
    floor = "" if counted == measured else (
        f" ({counted} counts: the expected order's x{expected:.1f}, give or take noise)")
    return (f"{times}. Beyond {size}={tiny}, from {size}={middle} to {size}={large} your work "
            f"per call grew x{growth.yours:.1f}, the reference's {measured}{floor}; at "
            f"{size}={large} it cost {_times(cost)} the reference's")


# --- depth: a parallel algorithm must not be a sequential chain ------------------------------


DEPTH_UNITS = {"matrix": "matrix products", "element": "elementwise products"}
"""What a depth check follows: chains of matrix products (a slot is a matrix), or of
multiplications element by element (a scan of elementwise maps; matmuls count there too)."""


def depth(spec: Spec) -> PlanFactory:
    """The longest chain of dependent products (`unit`: matrix or element) grows like log2 of
    the size: at most `per_level` more per doubling of `size` (plus `slack`), where a
    sequential loop in disguise grows like the size itself."""
    maker, run, size = spec.maker("cases"), spec.helper("run"), spec.text("size")
    per_level, slack = spec.number("per_level", 4), spec.number("slack", 4)
    watched = spec.flag("no_autograd")
    what, hint, unit = spec.text("what"), spec.text("hint"), spec.text("unit", "matrix")
    if unit not in DEPTH_UNITS:
        raise RoundError(f"{spec.where}: unit must be one of {', '.join(DEPTH_UNITS)}")

    def plan(ctx: Context) -> Plan:
        cases = _cases(maker, ctx)
        small, large = cases[0].dim(size), cases[-1].dim(size)
        allowed = per_level * (np.log2(large) - np.log2(small)) + slack

        def judge(obs: Observation) -> Verdict:
            if obs.get("autograd"):
                return autograd_seen(f"the {what}'s calls the depth was measured on")
            if obs["raised"]:
                return raised_verdict(cases[len(obs["depths"])].describe(), obs["raised"])
            low, high = obs["depths"][0], obs["depths"][-1]
            summary = (f"{what}: the longest chain of dependent {DEPTH_UNITS[unit]} is {low} "
                       f"at {size}={small} and {high} at {size}={large}")
            if high - low > allowed:
                return failed(summary + f": it grows with {size}, so the work is sequential",
                              hint=hint)
            if high == 0:
                # A chain of none: the products were made where the probe cannot follow them
                # (Python numbers, lists, calls it does not see), or numbers left the arrays
                # (depth's SlotDepths.escaped), so nothing was measured.
                return skipped(summary + ": no product was seen, or numbers left the arrays "
                               "(.tolist(), .item(), .numpy(), float()), so the depth was not "
                               "measured: keep the scan in array operations")
            return passed(summary + f" (O(log {size}) levels)")

        return Plan("chain_depth", {"cases": [c.data() for c in cases], "run": run,
                                    "unit": unit, "watch": watched}, judge, watched=watched)

    return plan


# --- an explanation in the candidate's words ----------------------------------------------

FUNCTION_WORDS = frozenset(
    "a an the is are was were be been being it its it's that this these those to of in on for "
    "when because so and but then which by with before after if as at from into has have had "
    "does do did will can would could should must not no their they them there than while "
    "until once each every".split())
MIN_WORDS = 4
"""The fewest words a statement has ("Call zero_grad every iteration.")."""
CONTENT_PER_IDEA = 2.5
"""The fewest words other than function words a sentence has per idea it names (its first
concept, what the idea is about; "In-place writes bump the version counter." names two in five
words): a real claim spends words on each idea it makes ("backward
accumulates into .grad"), a list of keywords padded into a sentence ("This is about detach,
adapter, requires_grad.") does not."""


ABBREVIATION = re.compile(r"(?:\be\.g|\bi\.e|\betc|\bvs|\bcf)\.$", re.I)
"""A full stop that ends an abbreviation, not a sentence ("saves some tensors, e.g. P[i-1], for
backward")."""


def sentences(text: str) -> list[str]:
    """The text cut into sentences: at ., ! and ? (not an abbreviation's), at blank lines and at
    list bullets."""
    found: list[str] = []
    for piece in re.split(r"(?<=[.!?])\s+|\n\s*\n|\n\s*(?:[-*\u2022]|\d+[.)])\s+", text):
        piece = piece.strip()
        if found and ABBREVIATION.search(found[-1]) and piece:
            found[-1] = f"{found[-1]} {piece}"
        elif piece:
            found.append(piece)
    return found


JOINING_WORDS = FUNCTION_WORDS - {"a", "an", "the"}
"""The function words that join ideas (an article alone joins nothing)."""


def is_statement(sentence: str) -> bool:
    """A sentence that says something, not a list of keywords ("version saved overwritten
    stack") nor a question: enough words, and either a word that joins ideas (is, when,
    because, to, of, ...) or the shape of a written sentence (a capital or code first, a full
    stop, not a comma-separated list)."""
    words = re.findall(r"[A-Za-z_']+", sentence.lower())
    if len(words) < MIN_WORDS or sentence.rstrip().endswith("?"):
        return False
    if any(w in JOINING_WORDS for w in words):
        return True
    begun = sentence[0].isupper() or CODE_FIRST.match(sentence) is not None
    written = begun and sentence.rstrip()[-1] in ".!"
    return written and sentence.count(",") < 2


CODE_FIRST = re.compile(r"[A-Za-z_]\w*(?:\.\w+)*(?:\(|\.\w)")
"""A sentence that opens with code ("loss.backward() accumulates gradients."), as a written
sentence opens with a capital."""


def states(sentence: str, concepts: Sequence[str]) -> bool:
    return all(re.search(c, sentence, re.I) for c in concepts)


def says_enough(sentence: str, ideas: Sequence[Sequence[str]]) -> bool:
    """Whether the sentence spends CONTENT_PER_IDEA words on each idea it names."""
    named = sum(bool(re.search(concepts[0], sentence, re.I)) for concepts in ideas)
    content = [w for w in re.findall(r"[A-Za-z_']+", sentence.lower())
               if w not in FUNCTION_WORDS]
    return len(content) >= CONTENT_PER_IDEA * named


DENIED_BEFORE = re.compile(
    r"\bnot\s+(?:think|believe)\b|n't\s+(?:think|believe)\b|\bdoubt\b|\bnot true\b|"
    r"(?:\b(?:do|does|did)\s+not|n't)\s+(?:(?:\w+ly|really|even|ever|always|necessarily|"
    r"quite)\s+)?$", re.I)
"""A claim denied from before the words that state it: a disbelief within DENIAL_WINDOW words
("I do not think the gradients accumulate"), or a verb negated right before them ("the
gradients do not accumulate", an adverb at most between). A negation further off, or of
another verb ("gradients could not reach the adapter", "it doesn't overwrite gradients"), is a
negative fact the idea may well be made of."""
DENIED_AFTER = re.compile(
    r"^\W*(?:[\w']+\W+){0,2}?(?:(?:is|are|was|were)\s+not\s+(?:needed|necessary|required)|"
    r"(?:isn't|aren't|wasn't|weren't)\s+(?:needed|necessary|required)|"
    r"(?:is|are)\s+(?:unnecessary|needless|useless|pointless|irrelevant)|"
    r"(?:is|are|was|were)\s+not\s+enough|(?:isn't|aren't|wasn't|weren't)\s+enough|"
    r"won't\s+work|(?:does|do|did)(?:\s+not|n't)\s+(?:matter|help|happen|fix|work))", re.I)
"""A claim denied right after the words that state it ("zero_grad is not needed", "zeroing
once is not enough")."""
REJECTED_AFTER = re.compile(
    r"\b(?:but|yet|however|though)\b[^.;]*?(?:\bhid(?:e|es|den|ing)\b|\bbypass|\bbreak|\bwrong\b|"
    r"\bavoid|\bdon't\b|\bdo not\b|\bnever\b|\bsilent|\bdangerous|\bunsafe|\bcorrupt)", re.I)
"""A claim set up to be knocked down: "X seems to work, but it hides the write", "X also
works, yet it bypasses the counter, so avoid it" (a misconception named to reject it)."""
WARNED_AFTER = re.compile(
    r"^\W*(?:would|could|might)\s+(?:\w+\s+)?(?:hid(?:e|es)|bypass|break|corrupt|fool|skip)\w*",
    re.I)
"""A mention followed by the harm it would do, a warning ("the fix is no_grad; .data would
hide the write from the counter"); a bare "X hides the write" or "use X to hide it" still
states X."""
NEGATED = re.compile(r"\b(?:not|never|no|without|avoid\w*|instead of|rather than)\b|n't\b",
                     re.I)
"""Any negation: what keeps a sentence from stating a misconception it names ("do not go
through .data")."""
DENIAL_WINDOW = 4
"""How many words before a claim's words a negation governs them."""


def denies(sentence: str, concepts: Sequence[str], before: re.Pattern[str],
           after: re.Pattern[str] = DENIED_AFTER) -> bool:
    """Whether the sentence says the concepts and denies a mention of one of them: `before`
    matching the DENIAL_WINDOW words ahead of it, or `after` the words right after it (what
    keeps a misconception from being said, NEGATED before it)."""
    if not states(sentence, concepts):
        return False
    return any(_denied_mention(sentence, m, before, after, len(sentence))
               for concept in concepts for m in re.finditer(concept, sentence, re.I))


def _denied_mention(sentence: str, found: re.Match[str], before: re.Pattern[str],
                    after: re.Pattern[str], stop: int) -> bool:
    ahead = re.findall(r"[\w']+", sentence[:found.start()])[-DENIAL_WINDOW:]
    return bool(before.search(" ".join(ahead) + " " if ahead else "")
                or after.search(sentence[found.end():stop]))


NEGATION = re.compile(r"\bnot\b(?!\s+(?:only|just)\b)|\bno\b(?!\s+(?:longer|matter)\b)|"
                      r"\b(?:never|nobody|nothing|neither|nor|cannot|hardly|barely)\b|"
                      r"\b(?-i:none)\b|\bnone\s+of\b|n't\b|\bfail(?:s|ed|ing)?\s+to\b", re.I)
"""A word that turns a clause into its opposite ("never", "no tensor", "none of them", "can't",
"fails to"); not a change of state or a widening ("no longer matches", "not only"), nor Python's
None ("p.grad = None")."""
UNDOING = re.compile(r"\bwithout\b|\b(?:escap|stop|prevent)\w*", re.I)
"""Words that turn a negation back: a clause with one of them and a negation says the claim
("you cannot write in place without bumping the counter", "nothing stops the write from
overwriting it", "no in-place write escapes the counter")."""
NEGATIVE_IDEA = re.compile(NEGATION.pattern + r"|\bwithout\b|\b(?:refus|gone|fre(?:e|es|ed)\b|"
                           r"rais|starv|los[et])\w*", re.I)
"""An idea's own words that make it a negative fact, said as readily with a negation as
without ("autograd refuses the write": "won't let you write"; "its buffers are gone, so it
raises": "can't go back through the trunk")."""
DENIED_FRAME = re.compile(
    r"\b(?:false|untrue|wrong|incorrect|a myth|not true|not the case|nonsense)\s+"
    r"(?:that|to say)\b|\b(?:not|n't)\s+(?:think|believe)\b|\bdoubt\b", re.I)
"""A frame that denies whatever the sentence says after it ("it is false that ...", "I do
not think ...")."""
CLAUSE_BREAK = re.compile(
    r"[,;:()]|\s[-\u2013\u2014]\s|\b(?:and|but|so|because|since|although|though|while|"
    r"whereas|when|whenever|before|after|until|unless|if|which|where|then|otherwise|yet)\b",
    re.I)
"""Where one clause of a sentence ends and the next begins: a negation governs its own."""


TAKEN_BACK = re.compile(
    r"(?:\bbut\s+(?:that|this|it)\s+(?:is|was)\s+(?:false|wrong|untrue|not\s+true|not\s+so|"
    r"a\s+myth|nonsense)|\bnone\s+of\s+(?:which|this|that|it|these|them)\s+(?:is|are)\s+true|"
    r"\b(?:is|are)\s+(?:a\s+myth|untrue))\W*$", re.I)
"""A sentence's end that takes back all it said ("..., but that is wrong", "..., none of which
is true"; not "..., which is wrong", which says what a result is)."""
TAKE_BACK = re.compile(
    r"^(?:but\s+)?(?:(?:that|this|it|which)\s+(?:is|was)|that's|this's|it's)\s+(?:false|wrong|"
    r"untrue|not\s+true|not\s+so|a\s+myth|nonsense)\W*$|^(?:i was wrong|not true|false|wrong)\W*$",
    re.I)
"""A sentence of its own that takes back the one before ("This is false.", "I was wrong.")."""


def taken_back(pieces: Sequence[str]) -> set[str]:
    """The sentences that the text takes back: by their own end or by the sentence after."""
    return {piece for index, piece in enumerate(pieces)
            if TAKEN_BACK.search(piece)
            or (index + 1 < len(pieces) and TAKE_BACK.match(pieces[index + 1]))}


def _negated_clause(sentence: str, found: re.Match[str], clause: tuple[int, int],
                    clauses: bool) -> bool:
    """Whether the mention `found` stands after a frame that denies what follows it, or (with
    `clauses`) in a clause (its [begin, stop)) that a negation turns round: an odd number of
    negations and of words that undo one (UNDOING)."""
    if DENIED_FRAME.search(sentence[:found.start()]):
        return True
    if not clauses:
        return False
    begin, stop = clause
    rest = sentence[begin:found.start()] + " " + sentence[found.end():stop]
    return (len(NEGATION.findall(rest)) + len(UNDOING.findall(rest))) % 2 == 1


def turns_round(sentence: str, concepts: Sequence[str], clauses: bool = True) -> bool:
    """Whether the sentence says a claim's concepts only to deny it: it names every concept,
    and each mention of one of them is denied: a verb negated right before it or a denial right
    after it in its clause (DENIED_BEFORE, DENIED_AFTER), a frame before it that denies what
    follows ("it is false that ...", "I doubt ..."), or, with `clauses` (a positive claim), a
    clause that a negation turns round ("in-place writes never bump the version counter", "no
    tensor is saved for backward"). A concept also said plainly elsewhere in the sentence is
    said: an answer may well set a rule beside the fact ("no later write may change them, but
    ours overwrite the saved P[i-1]"; "whether with zero_grad or None doesn't matter")."""
    if not states(sentence, concepts):
        return False
    breaks = list(CLAUSE_BREAK.finditer(sentence))

    def denied(found: re.Match[str]) -> bool:
        begin = max((b.end() for b in breaks if b.end() <= found.start()), default=0)
        stop = min((b.start() for b in breaks if b.start() >= found.end()),
                   default=len(sentence))
        return (_denied_mention(sentence, found, DENIED_BEFORE, DENIED_AFTER, stop)
                or _negated_clause(sentence, found, (begin, stop), clauses))

    return any(all(denied(m) for m in re.finditer(concept, sentence, re.I))
               for concept in concepts)


@dataclass(frozen=True)
class Misconception:
    """A claim an explanation must not make (checks.toml `misconceptions`): `says`, regexes
    that a sentence states all of, not negated (see denies); `why`, the sentence that says
    what is wrong with it; `loses`, the idea it contradicts, which it then earns nothing
    for."""

    says: tuple[str, ...]
    why: str
    loses: str | None

    @classmethod
    def read(cls, table: Any, ideas: Sequence[str], where: str) -> Misconception:
        if not isinstance(table, dict) or not isinstance(table.get("why"), str) or \
                not table.get("says"):
            raise RoundError(f"{where}: a misconception needs `says` (regexes) and `why`")
        says = table["says"] if isinstance(table["says"], list) else [table["says"]]
        loses = table.get("loses")
        if loses is not None and (not isinstance(loses, int) or not 0 <= loses < len(ideas)):
            raise RoundError(f"{where}: a misconception's `loses` is an idea's index, 0 to "
                             f"{len(ideas) - 1}")
        return cls(tuple(str(p) for p in says), table["why"],
                   None if loses is None else ideas[loses])

    def stated(self, sentence: str) -> bool:
        """Said, and neither negated, nor knocked down after it (REJECTED_AFTER), nor warned
        against right after its last mention (WARNED_AFTER)."""
        if not states(sentence, self.says) or denies(sentence, self.says, NEGATED):
            return False
        last = max(m.end() for concept in self.says
                   for m in re.finditer(concept, sentence, re.I))
        return not (REJECTED_AFTER.search(sentence[last:]) or WARNED_AFTER.search(sentence[last:]))


def explanation(spec: Spec) -> PlanFactory:
    """A module-level string that must state the ideas an interviewer listens for.

    An idea counts only when one sentence states it: each idea lists `concepts` (regexes) that
    must all appear in the same sentence, and a sentence counts only when it reads as one (see
    is_statement) and spends words on each idea it states (see says_enough), so a bag of
    keywords, or one padded into a sentence, earns nothing while a paraphrase in the candidate's own
    words earns full marks. `pattern` is a one-concept idea.

    Ideas are claims: a sentence that negates one ("I do not think the gradients accumulate",
    "zero_grad is not needed", see denies) states its opposite, and the idea is lost unless
    another sentence states it plainly; an idea marked `warning` ("not through .data") is said
    with a negation and is never denied by one. `misconceptions` are claims the explanation
    must not make (a fix the part's own code checks reject, a wrong cause): one stated, not
    negated, fails the check, costs the idea it contradicts, and is named with why it is
    wrong."""
    variable, about = spec.text("variable", "EXPLANATION"), spec.text("about")
    file = spec.text("file")
    raw = [(i["idea"], list(i.get("concepts", [i.get("pattern")])))
           for i in spec.value("ideas")]
    if any(None in concepts for _, concepts in raw):
        raise RoundError(f"{spec.where}: every idea needs concepts (or a pattern)")
    ideas = [(str(idea), [str(c) for c in concepts]) for idea, concepts in raw]
    # A warning ("not through .data") is stated with a negation: no negation denies it. A
    # negative fact ("it does not overwrite it", "autograd refuses the write" (NEGATIVE_IDEA),
    # or one marked `negative`: "the adapter never got a gradient") is denied by a negation of
    # its own words or a denying frame, not by any negation in its clauses (turns_round).
    warnings = {str(i["idea"]) for i in spec.value("ideas") if i.get("warning") is True}
    positive = {str(i["idea"]) for i in spec.value("ideas")
                if i.get("negative") is not True
                and not NEGATIVE_IDEA.search(str(i["idea"]))}
    wrong = [Misconception.read(m, [idea for idea, _ in ideas], spec.where)
             for m in spec.value("misconceptions", [])]

    def missed_hint(missed: Sequence[str]) -> str:
        return "Not yet said: " + "; ".join(missed) + "."

    def judge(obs: Observation) -> Verdict:
        text, names = obs["text"], [idea for idea, _ in ideas]
        if obs["type"] is None:
            return failed(f"{file} has no {variable}: add `{variable} = \"...\"` with a few "
                          f"sentences on {about}", hint=missed_hint(names))
        if text is None:
            return failed(f"{variable} should be a string, found {obs['type']}")
        if not text.strip():
            return not_started(f"{variable} is empty; write a few sentences on {about}",
                               hint=missed_hint(names))
        pieces = sentences(text)
        refuted = taken_back(pieces)
        said = [s for s in pieces if is_statement(s)
                and says_enough(s, [concepts for _, concepts in ideas])]
        believed = [m for m in wrong if any(m.stated(s) and s not in refuted for s in said)]
        lost = {m.loses for m in believed if m.loses}

        def denied_in(sentence: str, idea: str, concepts: Sequence[str]) -> bool:
            if sentence in refuted:
                return states(sentence, concepts)
            return turns_round(sentence, concepts, clauses=idea in positive)

        denied = [idea for idea, concepts in ideas if idea not in warnings
                  and any(denied_in(s, idea, concepts) for s in said)
                  and not any(states(s, concepts) and not denied_in(s, idea, concepts)
                              for s in said)]
        missed = [idea for idea, concepts in ideas
                  if idea in lost or idea in denied
                  or not any(states(s, concepts) for s in said)]
        covered = len(ideas) - len(missed)
        if not missed and not believed:
            return passed(f"states all {len(ideas)} key ideas")
        summary = f"states {covered} of {len(ideas)} key ideas"
        if not said:
            summary += (": it reads as a list of words; say in sentences how the ideas "
                        "connect (what happens, and why)")
        if denied:
            summary += f"; it says the opposite of: {'; '.join(denied)}"
        if believed:
            summary += "; it says something that is not so: " + " ".join(m.why for m in believed)
        hint = missed_hint([m for m in missed if m not in denied]) if \
            [m for m in missed if m not in denied] else None
        return failed(summary, fraction=covered / len(ideas), hint=hint)

    return lambda ctx: Plan("module_string", {"name": variable}, judge)


# --- special checks -----------------------------------------------------------------------------


def custom(spec: Spec) -> PlanFactory:
    """A check the round writes itself: `plan` names checks.py's `plan(ctx, params) -> Plan`;
    every other key of the row is in `params` (its hints, sizes, limits; `mistakes` arrive as
    Mistakes)."""
    make = spec.maker("plan")
    mistakes = spec.mistakes() if "mistakes" in spec.table else None
    params = spec.rest()
    if mistakes is not None:
        params["mistakes"] = mistakes
    return lambda ctx: make(ctx, params)


# How likely a failure of each kind is the mistake to fix first (see Check.rank).
RANKS: dict[str, int] = {"correctness": 2, "autograd": 2, "gradcheck": 2,
                         "finite_differences": 2, "depth": 2, "validation": 0,
                         "explanation": 0}

VOID_MESSAGES: dict[str, str] = {
    "no_autograd": "nothing shows the backward free of autograd (it used autograd, or did not "
                   "answer right where it was watched), so its values do not count",
    "cpu_growth": "autograd ran inside the backward in a call the cost check watched, so its "
                  "values do not count"}
"""Why the checks a failed check of a kind voids do not count, where the kind says it."""

MEASURED_KINDS: frozenset[str] = frozenset({"cpu_growth"})
"""Kinds whose plans are measured in timed rounds (Plan.measured); a custom row whose plan is
measured says `measured = true`. Known from the table, it costs no plan to ask."""

OBSERVED_INSIDE: frozenset[str] = frozenset({"no_autograd", "complexity", "depth",
                                             "inputs_unchanged", "fresh_result", "runs_agree"})
"""Kinds whose verdict rests on what the probe saw inside the candidate's process (autograd's
engine running, operations counted, the depth of a graph, an input's bytes after the call, a
result sharing an input's memory, two runs of the code agreeing with each other), not on
values it returned: a submission can forge those for itself (its process computes them; code
that finds the probe's frame replaces them, and code that tells the check's calls apart from
the values' behaves well there alone: the red team's cache kept honest only where the caller
refilled it), so in graded modes they advise and earn nothing."""

KINDS: dict[str, Callable[[Spec], PlanFactory]] = {
    "validation": validation,
    "correctness": correctness,
    "compare_runs": compare_runs,
    "runs_agree": runs_agree,
    "inputs_unchanged": inputs_unchanged,
    "fresh_result": fresh_result,
    "dtype_device": dtype_device,
    "keeps_dtype": keeps_dtype,
    "returns_float": returns_float,
    "autograd": autograd,
    "gradcheck": gradcheck,
    "autograd_function": autograd_function,
    "needs_input_grad": needs_input_grad,
    "no_autograd": no_autograd,
    "finite_differences": finite_differences,
    "complexity": complexity,
    "cpu_growth": cpu_growth,
    "depth": depth,
    "explanation": explanation,
    "custom": custom,
}
