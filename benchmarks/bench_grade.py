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
that every way gave every submission the same score (same seed).
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


def separate_checks(workspaces: list[Path]) -> tuple[float, list[float]]:
    total, scores = 0.0, []
    for root in workspaces:
        elapsed, out = timed([sys.executable, "-m", "grader", "check", "--json", "--seed", SEED],
                             root)
        total += elapsed
        scores.append(json.loads(out)["score"])
    return total, scores


def one_batch(workspaces: list[Path], jobs: int, *options: str) -> tuple[float, list[float]]:
    elapsed, out = timed([sys.executable, "-m", "grader", "grade", *map(str, workspaces),
                          "--jobs", str(jobs), "--json", "--seed", SEED, *options],
                         workspaces[0].parent)
    return elapsed, [row["score"] for row in json.loads(out)["submissions"]]


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
            seconds, check_scores = separate_checks(workspaces)
            separate.append(seconds)
            seconds, batch_scores = one_batch(workspaces, args.jobs)
            batch.append(seconds)
            seconds, unboxed_scores = one_batch(workspaces, args.jobs, "--no-sandbox")
            unboxed.append(seconds)
            if not check_scores == batch_scores == unboxed_scores:
                raise SystemExit(f"scores differ: check {check_scores}, grade {batch_scores}, "
                                 f"grade --no-sandbox {unboxed_scores}")
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
