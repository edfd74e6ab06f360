"""Is a Dask cluster as fast as this machine's own pool? Grade one class with `grade --jobs N`
and with `grade --cluster` on N local workers, and print each ratio (cluster / local).

    python benchmarks/bench_cluster.py [--submissions 6] [--runs 2] [--no-sandbox]

The class: `--submissions` copies of the default round's torch references (Parts 1 and 2), each
its own folder. The cluster: a `dask scheduler` and N `dask worker --nthreads 1` processes on
127.0.0.1, started before the timed batch as a coach's cluster would be (their judges start
with the batch, as a local pool's do; an idle cluster costs next to nothing while the local batch
runs). Each time is the best of `--runs` batches of the whole `grader grade` command, the
local and the cluster batches taking turns, so that both meet the same load on a shared
machine. The target (issue 25): one worker within 10% of `--jobs 1`.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from grader.coach.selfcheck import write_exercises  # noqa: E402 - after the path is set
from grader.engine.rounds import DEFAULT_ROUND, get_round  # noqa: E402

ENV = {**os.environ, "PYTHONPATH": str(REPO), "NO_COLOR": "1"}
COACH = 'flavor = "torch"\nparts = ["part1", "part2"]\n'


def batch_seconds(root: Path, *args: str) -> float:
    """Wall time of one `grader grade` over the class."""
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "grader", "grade", str(root / "class"),
                           "--config", str(root / "coach.toml"), "--seed", "1", "--json",
                           *args], env=ENV, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        sys.exit(f"grade {' '.join(args)} failed:\n{done.stderr}")
    return time.perf_counter() - started


def start(folder: Path, workers: int) -> tuple[str, list[subprocess.Popen[bytes]]]:
    """A scheduler and `workers` workers; the scheduler's address once they are all up."""
    folder.mkdir()
    file = folder / "scheduler.json"
    command = [sys.executable, "-m"]
    processes = [subprocess.Popen(
        [*command, "distributed.cli.dask_scheduler", "--scheduler-file", str(file), "--host",
         "127.0.0.1", "--port", "0", "--no-dashboard"], env=ENV, start_new_session=True,
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)]
    while not file.is_file():
        if processes[0].poll() is not None:
            sys.exit("dask scheduler exited")
        time.sleep(0.2)
    address: str = json.loads(file.read_text())["address"]
    processes += [subprocess.Popen(
        [*command, "distributed.cli.dask_worker", address, "--nthreads", "1", "--host",
         "127.0.0.1", "--no-dashboard"], env=ENV, start_new_session=True,
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL) for _ in range(workers)]
    from distributed import Client

    with Client(address) as client:
        client.wait_for_workers(workers, timeout=120)
    return address, processes


def compare(root: Path, workers: int, runs: int, extra: list[str]) -> float:
    """The best cluster time over the best local time, for `workers` workers and jobs."""
    address, processes = start(root / f"cluster-{workers}", workers)
    try:
        times = [(batch_seconds(root, "--jobs", str(workers), *extra),
                  batch_seconds(root, "--cluster", address, *extra)) for _ in range(runs)]
        local, remote = (min(column) for column in zip(*times, strict=True))
    finally:
        for process in reversed(processes):
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
    ratio = remote / local
    print(f"{workers} worker(s) / --jobs {workers}: {remote:.2f} s / {local:.2f} s "
          f"= {ratio:.2f}", flush=True)
    return ratio


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--submissions", type=int, default=6)
    parser.add_argument("--runs", type=int, default=2)
    parser.add_argument("--no-sandbox", action="store_true")
    args = parser.parse_args()
    extra = ["--no-sandbox"] if args.no_sandbox else []
    with tempfile.TemporaryDirectory(prefix="bench-cluster-") as tmp:
        root = Path(tmp)
        (root / "coach.toml").write_text(COACH)
        for i in range(args.submissions):
            write_exercises(root / "class" / f"s{i}", get_round(DEFAULT_ROUND), "torch",
                            "references")
        print(f"{args.submissions} submissions, best of {args.runs}; load: "
              f"{os.getloadavg()[0]:.2f}", flush=True)
        for workers in (1, 2):
            compare(root, workers, args.runs, extra)


if __name__ == "__main__":
    main()
