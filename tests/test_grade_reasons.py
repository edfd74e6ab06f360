"""`grader grade` says why a row scored what it did, in the terminal as in the HTML: the check
of a part that timed out, and a submission in another flavor than the coach's config pins."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from helpers import run_grader, write_workspace

VALIDATES_THEN_HANGS = '''"""Right on a handful of matrices, and never returns on more."""
import numpy as np


def prefix_products(W):
    if W.ndim != 3 or W.shape[1] != W.shape[2]:
        raise ValueError(f"W must be (N, D, D), got {W.shape}")
    while len(W) > 5:
        pass
    P = np.empty_like(W)
    for i in range(len(W)):
        P[i] = W[i] if i == 0 else P[i - 1] @ W[i]
    return P
'''


@pytest.mark.slow
def test_the_table_names_the_check_that_timed_out_after_others_passed(tmp_path: Path) -> None:
    root = write_workspace(tmp_path / "subs" / "ann", "numpy", "stubs")
    (root / "exercises" / "part2_out_of_place.py").write_text(VALIDATES_THEN_HANGS)
    config = tmp_path / "coach.toml"
    config.write_text('round = "prefix-products"\nflavor = "numpy"\nparts = ["part2"]\n')
    common = ["grade", root, "--config", config, "--seed", "5", "--timeout", "1",
              "--no-sandbox"]
    doc = json.loads(run_grader(*common, "--json", cwd=tmp_path).stdout)
    (part,) = doc["submissions"][0]["parts"]
    statuses = [c["status"] for c in part["checks"]]
    first_hang = statuses.index("timeout")
    assert first_hang > 0 and set(statuses[:first_hang]) == {"passed"}
    hung = part["checks"][first_hang]["id"]

    shown = run_grader(*common, cwd=tmp_path, env={"COLUMNS": "200"}).stdout
    line = next(line for line in shown.splitlines() if "timed out" in line)
    assert line.startswith(f"  1 {root}: part2: {hung} timed out: did not finish within 1 s of "
                           "CPU time")
    assert "while len(W) > 5:" in part["checks"][first_hang]["message"]
