"""Performance figures of grader itself and of the reference scan, printed as markdown tables.

    python benchmarks/bench.py            # everything (about a minute on 2 CPU cores)
    python benchmarks/bench.py --repeats 3 --skip-scan

Figures: the cost of `grader check part1` (no timed rounds: the grader's own cold cost) and
`part3` against a bare `import torch` (torch is imported once per run, not once per check), of
the sandboxed check (the default where bubblewrap works) against `--no-sandbox` (target: at
most 1.3x), the time of `grader --help`, `grader list` and a full `grader check`, and the
reference Hillis-Steele scan against the sequential loop at several N and D, on the CPU and on
CUDA when a device is present.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from grader.coach.selfcheck import write_exercises  # noqa: E402
from grader.engine.rounds import DEFAULT_ROUND, get_round  # noqa: E402

PREFIX = get_round(DEFAULT_ROUND)
SANDBOX_TARGET = 1.3
WATCH_OVERHEAD_TARGET_S = 0.5


def wall_times(commands: list[list[str]], cwd: Path, repeats: int) -> list[float]:
    """Median wall time of each command, after one untimed run of each (disk caches, and
    bytecode: some machines set PYTHONDONTWRITEBYTECODE, which would recompile grader on every
    start), the commands taking turns repeat after repeat: on a shared machine the load drifts
    over minutes, and commands compared with each other then meet the same load."""
    env = dict(os.environ, PYTHONPATH=str(REPO))
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    for command in commands:
        subprocess.run(command, cwd=cwd, env=env, capture_output=True, check=False)
    samples: list[list[float]] = [[] for _ in commands]
    for _ in range(repeats):
        for command, taken in zip(commands, samples, strict=True):
            began = time.perf_counter()
            subprocess.run(command, cwd=cwd, env=env, capture_output=True, check=False)
            taken.append(time.perf_counter() - began)
    return [statistics.median(taken) for taken in samples]


def solved_workspace(root: Path) -> Path:
    """A prefix-products torch workspace holding the references."""
    folder = write_exercises(root / "ws", PREFIX, "torch", "references")
    (folder / "grader.toml").write_text(f'round = "{PREFIX.id}"\nflavor = "torch"\n')
    return folder


def cli_figures(repeats: int) -> list[tuple[str, float, str]]:
    """Each command's median wall time and its ratio to a bare torch import timed in turns
    with it (wall_times), so that the ratio holds however the machine's load drifts."""
    grader = [sys.executable, "-m", "grader"]
    torch_import = [sys.executable, "-c", "import torch"]
    rows: list[tuple[str, float, str]] = []
    timed = {}
    with tempfile.TemporaryDirectory() as tmp:
        ws = solved_workspace(Path(tmp))
        for label, args in (
            ("grader --help", ["--help"]),
            ("grader list", ["list"]),
            # Part 1 has no timed rounds: its ratio is the grader's own cost of a cold run.
            ("grader check part1 --no-sandbox", ["check", "part1", "--seed", "1",
                                                 "--no-sandbox"]),
            ("grader check part1 (sandboxed, the default)", ["check", "part1", "--seed", "1",
                                                             "--sandbox"]),
            ("grader check part3 --no-sandbox", ["check", "part3", "--seed", "1",
                                                 "--no-sandbox"]),
            ("grader check part3 (sandboxed, the default)", ["check", "part3", "--seed", "1",
                                                             "--sandbox"]),
            ("grader check (all parts, sandboxed)", ["check", "--seed", "1", "--sandbox"]),
        ):
            seconds, beside = wall_times([grader + args, torch_import], ws, repeats)
            timed[label] = seconds
            rows.append((label, seconds, f"{seconds / beside:.2f}x (torch {beside:.2f} s)"))
    sandboxed = timed["grader check part3 (sandboxed, the default)"] / \
        timed["grader check part3 --no-sandbox"]
    verdict = "met" if sandboxed <= SANDBOX_TARGET else "NOT met"
    rows.append((f"sandboxed / plain, part3 (target <= {SANDBOX_TARGET}: {verdict})",
                 sandboxed, ""))
    return rows


@dataclass(frozen=True)
class WatchFigure:
    """One part's re-check from watch's warm worker, median seconds: `wall` in all; `timed` of
    it the rounds of fresh processes that a measured check (part3.complexity's CPU growth) runs
    of your code and the reference's, part of the part's own compute; `calls` what the other
    checks' calls of your code took; `overhead` the rest (target: at most
    WATCH_OVERHEAD_TARGET_S)."""

    part: str
    wall: float
    timed: float
    calls: float

    @property
    def overhead(self) -> float:
        return self.wall - self.timed - self.calls


def watch_figures(repeats: int) -> list[WatchFigure]:
    """What `grader watch` costs per save: its warm worker (started once, as watch starts it)
    grades the saved part again, the round's state recorded as after any check; each re-check
    is taken twice, with and without the measured checks' timed rounds, so that their cost (the
    part's own compute) is told apart from the grader's overhead."""
    from grader.candidate import grading
    from grader.engine.workspace import load_workspace
    from grader.runner import Request, Worker

    rows = []
    with tempfile.TemporaryDirectory() as tmp, Worker() as worker:
        workspace = load_workspace(solved_workspace(Path(tmp)))
        for part in ("part1", "part3"):
            walls: dict[bool, list[float]] = {True: [], False: []}
            calls = []
            for number in range(repeats + 1):
                for measured in (True, False):
                    request = Request(id=f"watch-{part}-{number}-{measured}",
                                      root=str(workspace.root), round=PREFIX.id,
                                      flavor="torch", parts=[part], seed=number,
                                      measured=measured)
                    began = time.perf_counter()
                    graded = grading.grade(workspace, request, worker, time.time)
                    if number:  # the first re-check warms the disk caches
                        walls[measured].append(time.perf_counter() - began)
                        if not measured:
                            calls.append(sum(c.duration_s for p in graded.result.parts
                                             for c in p.checks))
            full, untimed = (statistics.median(walls[m]) for m in (True, False))
            rows.append(WatchFigure(part, full, full - untimed, statistics.median(calls)))
    return rows


def scan_figures(devices: list[str]) -> list[tuple[str, int, int, float, float, float]]:
    import numpy as np
    import torch

    from grader.checks.table import load_module
    from grader.engine.references import load_reference_part
    from grader.engine.timing import CudaStopwatch, Stopwatch, measure, steady_host_allocator

    well_scaled = load_module(PREFIX, "checks").well_scaled
    scan = load_reference_part(PREFIX, PREFIX.part("part4"), "torch")
    sequential = load_reference_part(PREFIX, PREFIX.part("part2"), "torch").prefix_products
    rng = np.random.default_rng(0)
    steady_host_allocator()  # as part4.timing does: repeatable CPU figures
    rows = []
    for device in devices:
        stopwatch = CudaStopwatch(torch) if device == "cuda" else Stopwatch()
        sizes = ((256, 8), (1024, 32), (4096, 32), (4096, 64)) if device == "cuda" else (
            (256, 8), (1024, 8), (1024, 32), (4096, 8))
        for n, d in sizes:
            W = torch.from_numpy(well_scaled(rng, n, d).astype(np.float32)).to(device)
            dP = torch.randn(n, d, d, device=device)
            levels = scan.hillis_steele_scan_forward(W)[1]
            seq = measure(lambda W=W: sequential(W), stopwatch, budget_s=0.3).median
            fwd = measure(lambda W=W: scan.hillis_steele_scan_forward(W), stopwatch,
                          budget_s=0.3).median
            bwd = measure(lambda lv=levels, g=dP: scan.hillis_steele_scan_backward(lv, g),
                          stopwatch, budget_s=0.3).median
            rows.append((device, n, d, seq * 1e3, fwd * 1e3, bwd * 1e3))
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--skip-cli", action="store_true")
    parser.add_argument("--skip-scan", action="store_true")
    parser.add_argument("--skip-watch", action="store_true")
    args = parser.parse_args()
    print(f"Machine: {platform.processor() or platform.machine()}, {os.cpu_count()} CPU cores, "
          f"Python {platform.python_version()}")
    if not args.skip_cli:
        print("\n| command | median wall time | vs a bare `import torch` timed in turns with "
              "it |\n|---|---|---|")
        for label, seconds, ratio in cli_figures(args.repeats):
            shown = f"| `{label}` | {seconds:.2f} s | {ratio} |" if ratio else \
                f"| {label} | {seconds:.2f}x | |"
            print(shown)
    if not args.skip_watch:
        print(f"\n| `grader watch` re-check (warm worker) | median wall time | timed rounds "
              f"(measured checks) | other checks' calls | overhead (target <= "
              f"{WATCH_OVERHEAD_TARGET_S} s) |\n|---|---|---|---|---|")
        for row in watch_figures(args.repeats):
            print(f"| {row.part} | {row.wall:.2f} s | {row.timed:.2f} s | {row.calls:.2f} s | "
                  f"{row.overhead:.2f} s |")
    if not args.skip_scan:
        import torch

        devices = ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])
        torch.set_num_threads(max(1, (os.cpu_count() or 1)))
        print(f"\ntorch {torch.__version__}, {torch.get_num_threads()} CPU threads"
              + (f", {torch.cuda.get_device_name()}" if "cuda" in devices else ", no CUDA"))
        print("\n| device | N | D | sequential fwd | scan fwd | scan bwd | scan speedup |\n"
              "|---|---|---|---|---|---|---|")
        for device, n, d, seq, fwd, bwd in scan_figures(devices):
            print(f"| {device} | {n} | {d} | {seq:.2f} ms | {fwd:.2f} ms | {bwd:.2f} ms | "
                  f"{seq / fwd:.2f}x |")


if __name__ == "__main__":
    main()
