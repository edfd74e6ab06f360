"""How well does the grader name mistakes? Grade known solutions and count, per round:

    python benchmarks/diagnosis.py [--solutions DIR] [--rounds ROUND ...]

- caught: of the buggy solutions, those with a check that failed, erred or timed out (which
  checks, and with what hint, tests/test_solutions.py pins);
- named: of those with a pinned hint, those whose first trouble on the scorecard (the triage's
  root) carries one of the pinned hints, and which mechanism gave it (a mistake the round lists
  or a check's own text, a mutant of the reference, what holds of the result); a caught
  solution that pins no hint (a fresh mistake) is listed with its first hint, for a reader to
  judge;
- false failures: solutions that claim full marks and lost a check that applies here (one
  left undecided, by a machine too busy to judge it, holds its points back: listed apart).

The solutions: DIR/<round>/<case>/ in the format of tests/solutions (the default; see
tests/helpers.py), each graded in every flavor it names on one warm worker, without timed rounds
unless a folder pins one. Point --solutions at a folder of mistakes nobody described to the
grader to measure how it generalizes. Prints one markdown table, then every miss.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO), str(REPO / "tests")]

from grader.checks.table import measured_checks  # noqa: E402
from grader.engine.triage import triage  # noqa: E402
from grader.runner import Request, Worker  # noqa: E402

from helpers import Solution, load_solution, write_workspace  # noqa: E402

MUTANT_SAYS = "is what you get"
SYMPTOM_SAYS = "What holds:"


@dataclass
class Tally:
    buggy: int = 0
    caught: int = 0
    with_hint: int = 0
    named: int = 0
    by: dict[str, int] = field(default_factory=dict)
    correct: int = 0
    false_failures: int = 0
    misses: list[str] = field(default_factory=list)
    unpinned: list[str] = field(default_factory=list)


def mechanism(hint: str) -> str:
    if MUTANT_SAYS in hint:
        return "mutant"
    if hint.startswith(SYMPTOM_SAYS):
        return "symptoms"
    return "listed"


def grade(worker: Worker, solution: Solution, flavor: str, folder: Path) -> object:
    root = write_workspace(folder, flavor, solution.start, solution.files(flavor),
                           solution.round)
    pinned = {e.check for e in solution.expect if flavor in e.flavors}
    return worker.run(Request(
        id=f"{solution.key}-{flavor}", root=str(root), round=solution.round.id, flavor=flavor,
        parts=list(solution.parts), seed=1, timeout_s=solution.timeout_s,
        memory_mb=solution.memory_mb, device="cpu", informational=False,
        measured=solution.full_marks or bool(pinned & measured_checks(solution.round, flavor))))


def score(tally: Tally, solution: Solution, flavor: str, result: object) -> None:
    checks = {c.id: c for p in result.parts for c in p.checks}  # type: ignore[attr-defined]
    name = f"{solution.key}[{flavor}]"
    if solution.full_marks:
        tally.correct += 1
        # An undecided check holds its points back (the machine was too busy to judge it): no
        # failure, but listed, with its message, for a reader to judge.
        lost = [f"{c.id} ({c.status}: {c.message})" for c in checks.values()
                if c.status not in ("passed", "undecided") and not c.not_applicable]
        held = [f"{c.id} ({c.message})" for c in checks.values() if c.status == "undecided"]
        if lost:
            tally.false_failures += 1
            tally.misses.append(f"false failure {name}: {'; '.join(lost)}")
        if held:
            tally.misses.append(f"undecided {name}: {'; '.join(held)}")
        return
    tally.buggy += 1
    expected = [e for e in solution.expect if flavor in e.flavors]
    # Caught: a check failed (or erred, or timed out). Points alone would count a measured
    # check skipped here ("not measured") as a catch.
    lost = any(c.status in ("failed", "error", "timeout") for c in checks.values())
    if lost:
        tally.caught += 1
    else:
        tally.misses.append(f"not caught {name}")
    first = triage(result).first  # type: ignore[arg-type]
    shown = (first.root.hint or "") if first else ""
    hints = [e.hint for e in expected if e.hint and e.status != "passed"]
    if not hints:
        if lost:
            root = first.root.id if first else "nothing"
            tally.unpinned.append(f"{name} ({solution.about}): {root} said {shown!r}")
        return
    tally.with_hint += 1
    if any(h in shown for h in hints):
        tally.named += 1
        kind = mechanism(shown)
        tally.by[kind] = tally.by.get(kind, 0) + 1
    else:
        root = first.root.id if first else "nothing"
        tally.misses.append(f"not named {name}: {root} said {shown[:160]!r}")


def percent(part: int, whole: int) -> str:
    return f"{part}/{whole} ({100 * part / whole:.0f}%)" if whole else "-"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--solutions", type=Path, default=REPO / "tests" / "solutions")
    parser.add_argument("--rounds", nargs="*")
    options = parser.parse_args()
    folders = sorted(f for r in options.solutions.iterdir() if r.is_dir()
                     and (not options.rounds or r.name in options.rounds)
                     for f in r.iterdir() if (f / "expect.toml").is_file())
    solutions = [load_solution(f) for f in folders]
    tallies: dict[str, Tally] = {}
    began = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp, Worker() as worker:
        for number, solution in enumerate(solutions):
            if solution.name.startswith("hostile"):
                continue
            for flavor in solution.flavors:
                tally = tallies.setdefault(solution.round.id, Tally())
                result = grade(worker, solution, flavor, Path(tmp) / f"{number}-{flavor}")
                score(tally, solution, flavor, result)
    print(f"{len(solutions)} solution folders from {options.solutions}, graded in "
          f"{time.perf_counter() - began:.0f} s\n")
    print("| round | caught | named by the first hint | named by: listed / mutant / symptoms "
          "| false failures |")
    print("|---|---|---|---|---|")
    total = Tally()
    for round_id, t in sorted(tallies.items()):
        by = " / ".join(str(t.by.get(k, 0)) for k in ("listed", "mutant", "symptoms"))
        print(f"| {round_id} | {percent(t.caught, t.buggy)} | {percent(t.named, t.with_hint)} "
              f"| {by} | {percent(t.false_failures, t.correct)} |")
        for key in ("buggy", "caught", "with_hint", "named", "correct", "false_failures"):
            setattr(total, key, getattr(total, key) + getattr(t, key))
        for kind, count in t.by.items():
            total.by[kind] = total.by.get(kind, 0) + count
        total.misses += t.misses
        total.unpinned += t.unpinned
    by = " / ".join(str(total.by.get(k, 0)) for k in ("listed", "mutant", "symptoms"))
    print(f"| all | {percent(total.caught, total.buggy)} | "
          f"{percent(total.named, total.with_hint)} | {by} | "
          f"{percent(total.false_failures, total.correct)} |")
    if total.misses:
        print("\n" + "\n".join(f"- {m}" for m in total.misses))
    if total.unpinned:
        print("\nPinning no hint, for a reader to judge whether the first hint names the "
              "mistake:\n" + "\n".join(f"- {u}" for u in total.unpinned))


if __name__ == "__main__":
    main()
