"""The instructor's secret, mixed into the seed of `grader check` and `grader grade`.

A workflow in a candidate's repository (GitHub Classroom) is readable by that candidate, so a
seed pinned in it (for stable points from push to push) would tell them every graded run's
inputs before it runs; a seed shown on Gradescope would do the same for a resubmission. With a
secret (the environment variable GRADER_SECRET, or `secret` in the grader.toml the command
reads), the inputs come from the secret and the seed together.

GRADER_SECRET wins over the file, so a coach can grade one run under another secret without
editing the file that Gradescope's zip carries. The seed a run then reports is the mixed one,
the seed its inputs were drawn from: `--seed` with it reproduces a run wherever no secret is
set, and `grade` also reports the seed it was given, with which and the same secret `--seed`
reproduces it. The secret itself never reaches the grading worker (see
grader.runner._worker_environment; the Request carries only the mixed seed), so the code under
test cannot read it there.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Mapping

SECRET_ENV = "GRADER_SECRET"
MIXED_SEEDS = 10**9


def instructor_secret(configured: str | None,
                      environ: Mapping[str, str] = os.environ) -> str | None:
    """The secret to mix in: GRADER_SECRET when it is set and not empty, else the one the
    grader.toml sets (`configured`), else None."""
    return environ.get(SECRET_ENV) or configured or None


def seed_with_secret(seed: int, secret: str | None) -> int:
    """`seed` itself without a secret; else a seed below 10**9 that only someone who knows
    both the secret and the seed can compute."""
    if not secret:
        return seed
    digest = hashlib.sha256(f"{secret}\0{seed}".encode()).digest()
    return int.from_bytes(digest[:8], "big") % MIXED_SEEDS
