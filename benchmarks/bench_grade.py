"""Batch grading versus one `grader check` per submission, on this machine.

    python benchmarks/bench_grade.py [--submissions 8] [--jobs 2] [--rounds 3]

Builds N torch workspaces (half full-marks references, the rest wrong, half-broken or with a
syntax error, so the checks take the paths real batches take), then times, round after round
and interleaved so that background load hits both alike:

  separate:  `python -m grader check --json` run in each workspace, one after another;
  batch:     one `python -m grader grade WS... --jobs J --json`, every submission sandboxed;
  unboxed:   the same batch with --no-sandbox.

It prints the median wall time of each, the ratio batch / separate (the target is <= 0.6 for 8
sandboxed submissions with --jobs 2 on a 2-core machine) and submissions per minute, and checks
that every way gave every check of every submission the same status (same seed), and that the
two batches gave the same scores (`check` may score otherwise: in `grade` a check observed
inside the submission's own process earns nothing, its share going to the values).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from grader.coach.selfcheck import write_exercises  # noqa: E402
from grader.engine.rounds import DEFAULT_ROUND, get_round  # noqa: E402 - after the path is set

TARGET_RATIO = 0.6
SEED = "12345"
BREAKAGES = (
    None,
    ("part1_inplace.py", "P[i - 1] @ W[i]", "W[i] @ P[i - 1]"),
    None,
    ("part3_backward.py", "import torch", "import torch\nimport this_module_does_not_exist"),
    None,
    ("part2_out_of_place.py", "return torch.stack(products)", "return torch.stack(products"),
    None,
    ("part4_scan.py", "step *= 2", "step *= 3"),
)


def make_workspaces(folder: Path, count: int) -> list[Path]:
    """`count` torch workspaces, every other one broken in its own way."""
    workspaces = []
    for index in range(count):
        root = write_exercises(folder / f"candidate{index}", get_round(DEFAULT_ROUND), "torch",
                               "references")
        (root / "grader.toml").write_text('flavor = "torch"\n')
        breakage = BREAKAGES[index % len(BREAKAGES)]
        if breakage:
            name, old, new = breakage
            path = root / "exercises" / name
            path.write_text(path.read_text().replace(old, new, 1))
        workspaces.append(root)
    return workspaces


def environment() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(REPO), "NO_COLOR": "1"}


def timed(command: list[str], cwd: Path) -> tuple[float, str]:
    began = time.perf_counter()
    done = subprocess.run(command, cwd=cwd, env=environment(), capture_output=True, text=True)
    elapsed = time.perf_counter() - began
    if done.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(command)} failed ({done.returncode}):\n{done.stderr}")
    return elapsed, done.stdout


Graded = tuple[float, dict[str, str]]
"""A submission's score, and the status of each of its checks by id."""


def graded(document: dict[str, Any]) -> Graded:
    return document["score"], {check["id"]: check["status"] for part in document["parts"]
                               for check in part["checks"]}


def separate_checks(workspaces: list[Path]) -> tuple[float, list[Graded]]:
    total, found = 0.0, []
    for root in workspaces:
        elapsed, out = timed([sys.executable, "-m", "grader", "check", "--json", "--seed", SEED],
                             root)
        total += elapsed
        found.append(graded(json.loads(out)))
    return total, found


def one_batch(workspaces: list[Path], jobs: int, *options: str) -> tuple[float, list[Graded]]:
    elapsed, out = timed([sys.executable, "-m", "grader", "grade", *map(str, workspaces),
                          "--jobs", str(jobs), "--json", "--seed", SEED, *options],
                         workspaces[0].parent)
    return elapsed, [graded(row) for row in json.loads(out)["submissions"]]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--submissions", type=int, default=8)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="grader-bench-") as tmp:
        workspaces = make_workspaces(Path(tmp), args.submissions)
        separate, batch, unboxed = [], [], []
        for round_number in range(1, args.rounds + 1):
            seconds, checked = separate_checks(workspaces)
            separate.append(seconds)
            seconds, batched = one_batch(workspaces, args.jobs)
            batch.append(seconds)
            seconds, unboxed_graded = one_batch(workspaces, args.jobs, "--no-sandbox")
            unboxed.append(seconds)
            statuses = [[statuses for _, statuses in way]
                        for way in (checked, batched, unboxed_graded)]
            if not statuses[0] == statuses[1] == statuses[2]:
                raise SystemExit(f"verdicts differ: check {statuses[0]}, grade {statuses[1]}, "
                                 f"grade --no-sandbox {statuses[2]}")
            batch_scores = [score for score, _ in batched]
            if batch_scores != [score for score, _ in unboxed_graded]:
                raise SystemExit(f"scores differ: grade {batch_scores}, grade --no-sandbox "
                                 f"{[score for score, _ in unboxed_graded]}")
            print(f"round {round_number}: {args.submissions} x grader check "
                  f"{separate[-1]:6.1f} s   grader grade --jobs {args.jobs} {batch[-1]:6.1f} s"
                  f"   --no-sandbox {unboxed[-1]:6.1f} s")

    sep, bat, unb = (statistics.median(t) for t in (separate, batch, unboxed))
    ratio = bat / sep
    print(f"\nmachine: {os.cpu_count()} CPUs; scores per submission: {batch_scores}")
    print(f"separate `grader check` runs: median {sep:.1f} s "
          f"({60 * args.submissions / sep:.1f} submissions/min)")
    print(f"`grader grade --jobs {args.jobs}`:     median {bat:.1f} s "
          f"({60 * args.submissions / bat:.1f} submissions/min)")
    print(f"  the same, --no-sandbox: median {unb:.1f} s (ratio {unb / sep:.2f})")
    verdict = "met" if ratio <= TARGET_RATIO else "NOT met"
    print(f"ratio grade/check: {ratio:.2f} (target <= {TARGET_RATIO}: {verdict})")


if __name__ == "__main__":
    main()
