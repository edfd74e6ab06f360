"""Workspaces: finding one, reading its settings, writing fresh stubs into a new one.

A workspace is a folder holding `grader.toml` (which records the round and the flavor) and
`exercises/` (the candidate's part files). This repo is itself a prefix-products torch workspace.
Nothing here imports torch.
"""

from __future__ import annotations

import errno
import math
import os
import textwrap
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path

from grader.engine.documents import Unreadable, read_document, toml_document
from grader.engine.limits import DEFAULT_TIMEOUT_S
from grader.engine.results import in_eighths
from grader.engine.rounds import DEFAULT_ROUND, Part, Round, RoundError, get_round

CONFIG_NAME = "grader.toml"
VARY_INPUTS = ("never", "per-submission")
"""The values of grader.toml's `vary_inputs`: what the hidden inputs depend on besides the
secret and the seed (and GRADER_NONCE, see grader/engine/secret.py)."""
EXERCISES_DIR = "exercises"
STATE_DIR = ".grader"
GRADESCOPE_VISIBILITIES = ("hidden", "after_due_date", "after_published", "visible")
MAX_CONFIG_BYTES = 64 * 1024


class WorkspaceError(Exception):
    """A workspace problem the user can fix; the CLI prints it without a traceback."""


@dataclass(frozen=True)
class Settings:
    """The settings of one grader.toml, validated against its round; a value left unset falls
    back to the round's own (weights, budgets, minutes) or the runner's (timeout).

    `flavor_given`: the file names a flavor itself (an instructor's file without one lets each
    submission be graded in its own flavor). `secret`: the instructor's secret mixed into every
    seed (grader/engine/secret.py), kept out of the repr so that no message can print it.
    `vary_inputs`: "per-submission" mixes a fingerprint of the submission's code in with the
    secret, so that hidden inputs vary with the code even under a pinned seed.
    `cluster_address`: the Dask scheduler `grade` sends the submissions to ([cluster] address;
    docs/cluster.md)."""

    round: Round
    flavor: str
    timeout_s: float | None = None
    enabled: tuple[str, ...] | None = None
    points: dict[str, float] = field(default_factory=dict)
    budgets_minutes: dict[str, float] = field(default_factory=dict)
    mock_minutes: float | None = None
    gradescope_visibility: str = "visible"
    flavor_given: bool = True
    secret: str | None = field(default=None, repr=False)
    vary_inputs: str = "never"
    cluster_address: str | None = None

    @property
    def parts(self) -> tuple[Part, ...]:
        """The parts graded by default: those enabled, else every part of the flavor."""
        available = self.round.parts_for(self.flavor)
        if self.enabled is None:
            return available
        return tuple(p for p in available if p.id in self.enabled)

    @property
    def part_ids(self) -> tuple[str, ...]:
        return tuple(p.id for p in self.parts)

    def weight(self, part: Part) -> float:
        return self.points.get(part.id, part.weight)

    def weights(self) -> dict[str, float]:
        return {p.id: self.weight(p) for p in self.parts}

    def timeout(self, override: float | None = None) -> float:
        """Seconds per check: a command-line override, else grader.toml, else the default."""
        return override or self.timeout_s or DEFAULT_TIMEOUT_S

    def budget_minutes(self, part: Part) -> float:
        return self.budgets_minutes.get(part.id, part.budget_minutes)

    @property
    def minutes(self) -> float:
        return self.mock_minutes if self.mock_minutes is not None else self.round.minutes

    def with_flavor(self, flavor: str) -> Settings:
        return replace(self, flavor=flavor, flavor_given=True)


@dataclass(frozen=True)
class Workspace:
    """A located workspace and its validated settings."""

    root: Path
    settings: Settings

    @property
    def round(self) -> Round:
        return self.settings.round

    @property
    def flavor(self) -> str:
        return self.settings.flavor

    @property
    def exercises(self) -> Path:
        return self.root / EXERCISES_DIR

    @property
    def state_dir(self) -> Path:
        return self.state_folder()

    def state_folder(self, *parts: str) -> Path:
        """A folder of the workspace's state (.grader/, or one below it), which must be one of
        the workspace's own: OSError where it, or a folder on the way, is a link (a workspace
        handed in with `.grader` linked to /etc would have a coach's `grader check`, as root,
        write there)."""
        linked = link_on_the_way(self.root, (STATE_DIR, *parts))
        if linked is not None:
            raise OSError(errno.ELOOP, "a link where the workspace keeps its state (the "
                                       "grader writes only inside the workspace)", str(linked))
        return self.root.joinpath(STATE_DIR, *parts)

    def part_file(self, part: Part) -> Path:
        return self.exercises / part.file


def link_on_the_way(root: Path, parts: Iterable[str]) -> Path | None:
    """The first of root/a, root/a/b, ... (for parts a, b, ...) that is a link, if one is:
    what is written below it would land wherever the link points."""
    here = root
    for part in parts:
        here = here / part
        if here.is_symlink():
            return here
    return None


def pristine_files(round_: Round, flavor: str) -> dict[str, str]:
    """Every file of a fresh exercises/ folder, relative name -> text: the round's stubs, and
    the package's __init__.py, written here from the round's data (a round ships no package of
    its own named `numpy` or `torch`, which tools would take for the libraries)."""
    folder = round_.stubs_dir(flavor)
    if not folder.is_dir():
        raise WorkspaceError(f"round {round_.id} has no {flavor} stubs (looked in {folder})")
    stubs = {p.name: p.read_text() for p in sorted(folder.glob("*.py"))}
    return {"__init__.py": package_text(round_, flavor), **stubs}


def package_text(round_: Round, flavor: str) -> str:
    """The exercises/ package's docstring: which round, which flavor, which files to fill in."""
    files = ", ".join(part.file for part in round_.parts_for(flavor))
    about = textwrap.fill(f'"""The exercises of the {round_.id} round ({flavor}): '
                          f"{round_.title}.", width=96)
    return f'{about}\n\n{textwrap.fill(f"Fill in {files}.", width=96)}\n"""\n'


def config_text(round_: Round, flavor: str) -> str:
    """A fresh grader.toml: the round and flavor, then every setting commented out with its
    default (taken from the round, so it is written once)."""
    parts = round_.parts_for(flavor)
    ids = ", ".join(f'"{p.id}"' for p in parts)
    lines = [
        "# grader workspace settings. Uncomment a line to change it.",
        f'round = "{round_.id}"',
        f'flavor = "{flavor}"'.ljust(50) + "# a coach's copy grades every submission in it",
        "",
        f"# timeout = {DEFAULT_TIMEOUT_S:g}" + " " * 36 + "# seconds each check may run",
        f"# parts = [{ids}]    # the parts graded by default",
        '# secret = "..."' + " " * 34 + "# instructors: mixed into every seed",
        '# vary_inputs = "never"' + " " * 27 + '# or "per-submission" (under a secret)',
        "",
        "# [points]            # each part's share of the score",
        *(f"# {p.id} = {p.weight:g}" for p in parts),
        "",
        "# [budgets]           # minutes per part in a mock interview",
        *(f"# {p.id} = {p.budget_minutes:g}" for p in parts),
        "",
        "# [mock]",
        f"# minutes = {round_.minutes:g}",
        "",
        "# [gradescope]        # when candidates see their results on Gradescope",
        '# visibility = "visible"    # or "hidden", "after_due_date", "after_published"',
        "",
        "# [cluster]           # instructors: grade on a Dask cluster (docs/cluster.md)",
        '# address = "tcp://HOST:8786"',
    ]
    return "\n".join(lines) + "\n"


def init_workspace(directory: Path, flavor: str | None = None, *,
                   round_id: str = DEFAULT_ROUND) -> Workspace:
    """Write a fresh workspace at `directory`; refuse to touch one that already has work in it."""
    return write_fresh(directory, _round(round_id, "--round"), flavor)


def write_fresh(directory: Path, round_: Round, flavor: str | None = None) -> Workspace:
    """A fresh workspace of `round_` at `directory` (see init_workspace)."""
    flavor = flavor or round_.default_flavor
    if flavor not in round_.flavors:
        raise WorkspaceError(f"round {round_.id} has no {flavor!r} flavor; choose one of: "
                             f"{', '.join(round_.flavors)}")
    directory = directory.resolve()
    if directory.exists() and not directory.is_dir():
        raise WorkspaceError(f"{directory} exists and is not a folder")
    # A link counts as taken even where it leads nowhere: writing through it would create a
    # file wherever it points.
    taken = [p for p in (directory / CONFIG_NAME, directory / EXERCISES_DIR)
             if p.exists() or p.is_symlink()]
    if taken:
        names = ", ".join(str(p) for p in taken)
        raise WorkspaceError(
            f"{names} already exists: not overwriting anyone's work "
            "(choose an empty folder, or use `grader reset` inside a workspace)"
        )
    files = pristine_files(round_, flavor)
    exercises = directory / EXERCISES_DIR
    exercises.mkdir(parents=True)
    for path, text in [*((exercises / n, t) for n, t in files.items()),
                       (directory / CONFIG_NAME, config_text(round_, flavor))]:
        with path.open("x", encoding="utf-8") as made:  # never through a link put there since
            made.write(text)
    return Workspace(directory, Settings(round_, flavor))


def _round(round_id: object, where: str) -> Round:
    if not isinstance(round_id, str):
        raise WorkspaceError(f"{where}: round must be a string, got {round_id!r}")
    try:
        return get_round(round_id)
    except RoundError as exc:
        raise WorkspaceError(f"{where}: {exc}") from exc


def read_config(path: Path) -> dict[str, object]:
    """Parse a grader.toml, refusing one too large to be a settings file (it is read whole)."""
    try:
        size = path.stat().st_size
        if size > MAX_CONFIG_BYTES:
            raise WorkspaceError(f"{path}: {size} bytes is too large for a settings file "
                                 f"(at most {MAX_CONFIG_BYTES // 1024} KiB)")
        return read_document(path, toml_document, MAX_CONFIG_BYTES)
    except Unreadable as exc:
        raise WorkspaceError(f"{path}: {exc}") from exc
    except OSError as exc:
        raise WorkspaceError(f"{path}: cannot read it ({exc.strerror})") from exc


def load_config(path: Path) -> Settings:
    """The validated settings of one grader.toml: a workspace's, or an instructor's file on its
    own (batch grading and Gradescope read one without any exercises/ beside it). A missing
    `round` means prefix-products, so workspaces made before rounds existed keep working."""
    config = read_config(path)
    return parse_settings(config, str(path))


def load_workspace(root: Path, require_exercises: bool = True) -> Workspace:
    """Load the workspace rooted exactly at `root`, validating its config.

    `require_exercises=False` is for `grader reset`, which must be able to bring back an
    exercises/ folder that was deleted.
    """
    root = root.resolve()
    if not root.exists():
        raise WorkspaceError(f"{root} does not exist")
    if not root.is_dir():
        raise WorkspaceError(f"{root} is not a folder")
    if not (root / CONFIG_NAME).is_file():
        raise WorkspaceError(
            f"{root} is not a grader workspace (no {CONFIG_NAME}); "
            "create one with `grader init DIR`"
        )
    settings = load_config(root / CONFIG_NAME)
    if require_exercises and not (root / EXERCISES_DIR).is_dir():
        raise WorkspaceError(f"{root} has no {EXERCISES_DIR}/ folder")
    return Workspace(root, settings)


MOST = {"timeout": 86400.0, "points": 1e6, "budgets": 10080.0, "mock.minutes": 10080.0}
"""The largest value each number setting takes: a day of seconds per check, a week of minutes
for a round or a part. Past them a value is no setting but a way to overflow the clock."""


def _positive_number(value: object, where: str, most: float) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not value > 0 \
            or not math.isfinite(value):
        raise WorkspaceError(f"{where} must be a positive finite number, got {value!r}")
    if value > most:
        raise WorkspaceError(f"{where} must be at most {most:g}, got {value!r}")
    return float(value)


def _per_part(config: dict[str, object], table: str, round_: Round,
              where: str) -> dict[str, float]:
    raw = config.get(table, {})
    if not isinstance(raw, dict):
        raise WorkspaceError(f"{where}: [{table}] must be a table of part = number")
    unknown = sorted(set(raw) - set(round_.part_ids))
    if unknown:
        raise WorkspaceError(f"{where}: [{table}] names unknown part(s) {', '.join(unknown)}; "
                             f"{round_.id}'s parts: {', '.join(round_.part_ids)}")
    values = {part: _positive_number(v, f"{where}: {table}.{part}", MOST[table])
              for part, v in raw.items()}
    uneven = [part for part, v in values.items() if table == "points" and not in_eighths(v)]
    if uneven:
        raise WorkspaceError(f"{where}: points.{uneven[0]} must be a multiple of 1/8, got "
                             f"{raw[uneven[0]]!r}: points are kept in eighths (GitHub "
                             "Classroom's granularity), so that every output adds up")
    return values


def _gradescope_visibility(config: dict[str, object], where: str) -> str:
    table = config.get("gradescope", {})
    if not isinstance(table, dict) or set(table) - {"visibility"}:
        raise WorkspaceError(f"{where}: [gradescope] takes only visibility = <string>")
    visibility = table.get("visibility", "visible")
    if visibility not in GRADESCOPE_VISIBILITIES:
        raise WorkspaceError(f"{where}: gradescope.visibility must be one of "
                             f"{', '.join(GRADESCOPE_VISIBILITIES)}, got {visibility!r}")
    return str(visibility)


def _cluster_address(config: dict[str, object], where: str) -> str | None:
    table = config.get("cluster", {})
    if not isinstance(table, dict) or set(table) - {"address"}:
        raise WorkspaceError(f"{where}: [cluster] takes only address = <string>")
    address = table.get("address")
    if address is not None and (not isinstance(address, str) or not address.strip()):
        raise WorkspaceError(f"{where}: cluster.address must be a scheduler's address such as "
                             f"\"tcp://10.0.0.5:8786\", got {address!r}")
    return address


KNOWN_SETTINGS = {"round", "flavor", "timeout", "parts", "secret", "vary_inputs", "points",
                  "budgets", "mock", "gradescope", "cluster"}


def parse_settings(config: dict[str, object], where: str) -> Settings:
    """Validate a grader.toml's settings; each bad value gets its own clear error."""
    unknown = sorted(set(config) - KNOWN_SETTINGS)
    if unknown:
        raise WorkspaceError(f"{where}: unknown setting(s) {', '.join(unknown)}; "
                             f"known: {', '.join(sorted(KNOWN_SETTINGS))}")
    round_ = _round(config.get("round", DEFAULT_ROUND), where)
    flavor = config.get("flavor", round_.default_flavor)
    if flavor not in round_.flavors:
        raise WorkspaceError(f"{where}: flavor must be one of {', '.join(round_.flavors)} for "
                             f"round {round_.id}, got {flavor!r}")
    enabled = config.get("parts")
    if enabled is not None and (not isinstance(enabled, list) or not enabled
                                or any(p not in round_.part_ids for p in enabled)):
        raise WorkspaceError(f"{where}: parts must be a non-empty list drawn from "
                             f"{', '.join(round_.part_ids)}, got {enabled!r}")
    mock = config.get("mock", {})
    if not isinstance(mock, dict) or set(mock) - {"minutes"}:
        raise WorkspaceError(f"{where}: [mock] takes only minutes = <number>")
    timeout = config.get("timeout")
    minutes = mock.get("minutes")
    secret = config.get("secret")
    if secret is not None and (not isinstance(secret, str) or not secret):
        raise WorkspaceError(f"{where}: secret must be a non-empty string")
    vary_inputs = config.get("vary_inputs", "never")
    if vary_inputs not in VARY_INPUTS:
        raise WorkspaceError(f"{where}: vary_inputs must be one of {', '.join(VARY_INPUTS)}, "
                             f"got {vary_inputs!r}")
    return Settings(
        round=round_, flavor=str(flavor),
        timeout_s=None if timeout is None else _positive_number(timeout, f"{where}: timeout",
                                                                MOST["timeout"]),
        enabled=None if enabled is None else tuple(p for p in round_.part_ids if p in enabled),
        points=_per_part(config, "points", round_, where),
        budgets_minutes=_per_part(config, "budgets", round_, where),
        mock_minutes=None if minutes is None else _positive_number(
            minutes, f"{where}: mock.minutes", MOST["mock.minutes"]),
        gradescope_visibility=_gradescope_visibility(config, where),
        flavor_given="flavor" in config, secret=secret, vary_inputs=str(vary_inputs),
        cluster_address=_cluster_address(config, where),
    )


def _start_folder(start: Path | None) -> Path:
    """`start`, else the current folder, resolved; WorkspaceError where the current folder is
    gone (deleted while a shell still stands in it)."""
    try:
        return (start or Path(os.getcwd())).resolve()
    except FileNotFoundError:
        raise WorkspaceError("the current folder no longer exists (deleted or moved): cd into "
                             "your workspace, or pass --workspace DIR") from None


def find_config(start: Path | None = None) -> Path | None:
    """The grader.toml in `start` (default: the current folder) or its nearest parent."""
    here = _start_folder(start)
    for folder in (here, *here.parents):
        if (folder / CONFIG_NAME).is_file():
            return folder / CONFIG_NAME
    return None


def find_workspace(start: Path | None = None, require_exercises: bool = True) -> Workspace:
    """The workspace containing `start` (default: the current folder) or one of its parents."""
    config = find_config(start)
    if config is None:
        here = _start_folder(start)
        raise WorkspaceError(
            f"no grader workspace here or above {here} (looked for {CONFIG_NAME}); "
            "run `grader init DIR` to create one, or pass --workspace DIR"
        )
    return load_workspace(config.parent, require_exercises)
