"""The instructor's secret, mixed into the seed of `grader check` and `grader grade`.

A workflow in a candidate's repository (GitHub Classroom) is readable by that candidate, so a
seed pinned in it (for stable points from push to push) would tell them every graded run's
inputs before it runs. With GRADER_SECRET set (a repository or organisation secret passed as an
environment variable), the inputs come from the secret and the seed together.

The seed a run then reports is the mixed one, the seed its inputs were drawn from, so the
promise that `--seed` reproduces a failure still holds wherever GRADER_SECRET is not set (a
candidate's laptop). The secret itself never reaches the grading worker (see
grader.runner._worker_environment), so the code under test cannot read it there.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Mapping

SECRET_ENV = "GRADER_SECRET"
MIXED_SEEDS = 10**9


def seed_with_secret(seed: int, environ: Mapping[str, str] = os.environ) -> int:
    """`seed` itself when GRADER_SECRET is unset or empty; else a seed below 10**9 that only
    someone who knows both the secret and the seed can compute."""
    secret = environ.get(SECRET_ENV, "")
    if not secret:
        return seed
    digest = hashlib.sha256(f"{secret}\0{seed}".encode()).digest()
    return int.from_bytes(digest[:8], "big") % MIXED_SEEDS
