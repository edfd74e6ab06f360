"""The instructor's secret: what keeps the hidden inputs of a graded run unknown to the
candidate, though every seed they are shown is public.

A workflow in a candidate's repository (GitHub Classroom) is readable by that candidate, and so
is every seed a run shows them (the scorecard's, each failure's "reproduce with", `--json`'s,
Classroom's `test_code`, Gradescope's output). So no seed shown may be the one the inputs are
drawn from. The rule, by construction:

- The seed a run is *given* (`--seed`, else a fresh one) is the only seed any output names: the
  Request's and the Context's `seed`. Without a secret the inputs are drawn from it, so
  `--seed N` reproduces any run where no secret is set (a candidate practising alone).
- With a secret (the environment variable GRADER_SECRET, else `secret` in the grader.toml the
  command reads; the variable wins, so a coach can grade one run under another secret without
  editing the file Gradescope's zip carries), the inputs are drawn from the *hidden seed*:
  HMAC-SHA256 keyed by the secret over the given seed and, where the instructor asks for them,
  the submission's code and a nonce. The hidden seed travels to the judge as the Request's
  `hidden_seed` and into `Context.rng()`, never into a message: `--seed N` with the same secret
  (and code and nonce) reproduces a run exactly, without the secret it draws other inputs.
- `vary_inputs = "per-submission"` in the instructor's grader.toml mixes in a fingerprint of the
  submission's exercise files: with a pinned seed, the same code meets the same inputs on every
  run (stable points) and changed code new ones, so what one run's failure shows of its inputs
  says nothing of the next submission's. GRADER_NONCE, when set (e.g. to GitHub's run id),
  mixes in any text as well: inputs then vary per run. Both count only under a secret.

The secret itself never reaches the grading worker (see grader.runner._worker_environment; the
Request carries only the two seeds), so the code under test cannot read it there.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, TypedDict

if TYPE_CHECKING:
    from grader.engine.rounds import Round
    from grader.engine.workspace import Settings

SECRET_ENV = "GRADER_SECRET"
NONCE_ENV = "GRADER_NONCE"
HIDDEN_SEED_BITS = 128
"""How much of the HMAC the hidden seed keeps: far past any search over the seeds, so that a
value the code under test sees (an input, a nonce) cannot be traced back to the seed that
drew every other input of the run."""
MAX_FINGERPRINTED_BYTES = 16 * 1024 * 1024
"""How much of one exercise file goes into the fingerprint: a file is read in the grader's own
process, and a candidate's file could be anything."""


def instructor_secret(configured: str | None,
                      environ: Mapping[str, str] = os.environ) -> str | None:
    """The secret to mix in: GRADER_SECRET when it is set and not empty, else the one the
    grader.toml sets (`configured`), else None."""
    return environ.get(SECRET_ENV) or configured or None


def instructor_nonce(environ: Mapping[str, str] = os.environ) -> str | None:
    """GRADER_NONCE when it is set and not empty, else None."""
    return environ.get(NONCE_ENV) or None


def seed_with_secret(seed: int, secret: str | None, *, code: str | None = None,
                     nonce: str | None = None) -> int:
    """`seed` itself without a secret; else the hidden seed: HIDDEN_SEED_BITS of an
    HMAC-SHA256 keyed by the secret over the seed, the code fingerprint and the nonce, so it is
    computable only by someone who knows all of them, and never `seed` itself."""
    if not secret:
        return seed
    message = json.dumps(["grader hidden inputs", seed, code, nonce]).encode()
    digest = hmac.new(secret.encode(), message, hashlib.sha256).digest()
    hidden = int.from_bytes(digest[:HIDDEN_SEED_BITS // 8], "big")
    # Without the secret `--seed seed` draws from `seed` itself: never the hidden inputs.
    return hidden if hidden != seed else hidden + 1


def code_fingerprint(root: Path) -> str:
    """SHA-256 of everything under a submission's exercises/ folder (every file, at any depth,
    in sorted order of its path there, compiled caches aside): each path, then its bytes, or a
    mark for what is not a regular file (a link to a device is never read). Any file the code
    could read or import counts, so a table of answers beside unchanged part files changes the
    inputs too. The same for a workspace and for the same files staged by `grade`, so either
    reproduces the other."""
    from grader.engine.workspace import EXERCISES_DIR

    folder = root / EXERCISES_DIR
    digest = hashlib.sha256()
    paths = sorted(p for p in folder.rglob("*") if "__pycache__" not in p.parts) \
        if folder.is_dir() else []
    for path in paths:
        name = path.relative_to(folder).as_posix()
        if path.is_dir() and not path.is_symlink():
            continue
        digest.update(json.dumps(name).encode() + b"\0")
        try:
            if path.is_symlink() or not path.is_file():
                raise FileNotFoundError(path)
            with open(path, "rb") as handle:
                data = handle.read(MAX_FINGERPRINTED_BYTES)
            digest.update(b"file %d\0" % len(data) + data)
        except OSError:
            digest.update(b"none\0")
    return digest.hexdigest()


class RequestSeeds(TypedDict):
    """The seeds of a runner Request (see grader.runner.protocol.Request)."""

    seed: int
    hidden_seed: int | None


@dataclass(frozen=True)
class Seeding:
    """How a run's inputs follow from the seed it was given: `given`, the only seed any output
    shows; with a `secret` (kept out of the repr), also the `nonce` and, `per_submission`, the
    fingerprint of the submission's exercise files."""

    given: int
    secret: str | None = field(default=None, repr=False)
    nonce: str | None = None
    per_submission: bool = False

    @classmethod
    def of(cls, given: int, settings: Settings,
           environ: Mapping[str, str] = os.environ) -> Seeding:
        """The seeding of a run under these settings (their secret unless GRADER_SECRET
        overrides it; `vary_inputs`) and this environment (GRADER_NONCE)."""
        secret = instructor_secret(settings.secret, environ)
        if not secret:
            return cls(given)
        return cls(given, secret, instructor_nonce(environ),
                   settings.vary_inputs == "per-submission")

    @property
    def hidden(self) -> bool:
        """Whether the inputs come from a seed no output shows."""
        return bool(self.secret)

    def hidden_seed(self, round_: Round, root: Path) -> int | None:
        """The seed the inputs of the submission at `root` are drawn from, where it is not the
        given one (None without a secret)."""
        if not self.secret:
            return None
        code = code_fingerprint(root) if self.per_submission else None
        return seed_with_secret(self.given, self.secret, code=code, nonce=self.nonce)

    def request_seeds(self, round_: Round, root: Path) -> RequestSeeds:
        """The seeds of a runner Request for the submission at `root`."""
        return {"seed": self.given, "hidden_seed": self.hidden_seed(round_, root)}

    def report(self) -> dict[str, int | bool]:
        """The seeds as `grade --json` and Gradescope's extra data report them: the seed given,
        and whether the secret was mixed in (then `--seed` reproduces it only with the
        secret)."""
        return {"seed": self.given, **({"secret": True} if self.secret else {})}

    def words(self) -> str:
        """The seeding in words, for the coach."""
        if not self.secret:
            return f"seed {self.given}"
        mixed = ["the secret"] + (["each submission's code"] if self.per_submission else []) \
            + ([f"the nonce {self.nonce!r}"] if self.nonce else [])
        return f"seed {self.given} with {', '.join(mixed[:-1]) + ' and ' if mixed[1:] else ''}" \
               f"{mixed[-1]}"
