"""Workspaces: finding one, reading its config, writing fresh stubs into a new one.

A workspace is a folder holding `grader.toml` (which records the flavor) and `exercises/` (the
candidate's four part files). This repo is itself a torch workspace. Nothing here imports torch.
"""

from __future__ import annotations

import os
import tomllib
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from string import Template

from grader.parts import DEFAULT_FLAVOR, FLAVORS, PART_IDS, PARTS, Part

CONFIG_NAME = "grader.toml"
EXERCISES_DIR = "exercises"
STATE_DIR = ".grader"
DEFAULT_TIMEOUT_S = 10.0
GRADESCOPE_VISIBILITIES = ("hidden", "after_due_date", "after_published", "visible")


class WorkspaceError(Exception):
    """A workspace problem the user can fix; the CLI prints it without a traceback."""


@dataclass(frozen=True)
class Settings:
    """Instructor settings from grader.toml, validated; None means "the registry's default"."""

    timeout_s: float | None = None
    enabled: tuple[str, ...] = PART_IDS
    points: dict[str, float] = field(default_factory=dict)
    budgets_minutes: dict[str, float] = field(default_factory=dict)
    mock_minutes: float = 75.0
    gradescope_visibility: str = "visible"

    def weight(self, part: Part) -> float:
        return self.points.get(part.id, part.weight)

    def timeout(self, override: float | None = None) -> float:
        """Seconds per check: a command-line override, else grader.toml, else the default."""
        return override or self.timeout_s or DEFAULT_TIMEOUT_S

    def budget_minutes(self, part: Part) -> float:
        return self.budgets_minutes.get(part.id, part.budget_minutes)


@dataclass(frozen=True)
class Workspace:
    """A located workspace and its validated config."""

    root: Path
    flavor: str
    settings: Settings = field(default_factory=Settings)

    @property
    def exercises(self) -> Path:
        return self.root / EXERCISES_DIR

    @property
    def state_dir(self) -> Path:
        return self.root / STATE_DIR

    def part_file(self, part: Part) -> Path:
        return self.exercises / part.file


_STUB_VALUES = {
    "torch": {
        "flavor": "torch",
        "array": "torch.Tensor",
        "import_line": "import torch",
        "autograd_note": (
            "\nAutograd must flow from P back to W: P.sum().backward() has to fill W.grad."
        ),
    },
    "numpy": {
        "flavor": "numpy",
        "array": "np.ndarray",
        "import_line": "import numpy as np",
        "autograd_note": "",
    },
}


def _stub_template(name: str) -> Template:
    return Template(resources.files("grader").joinpath("stubs", f"{name}.tmpl").read_text())


def render_stub(part: Part, flavor: str) -> str:
    """The pristine stub of one part in one flavor, from the templates shipped in the package."""
    return _stub_template(part.file).substitute(_STUB_VALUES[flavor])


def pristine_files(flavor: str) -> dict[str, str]:
    """Every file of a fresh exercises/ folder, relative name -> text."""
    files = {"__init__.py": _stub_template("__init__.py").substitute(_STUB_VALUES[flavor])}
    files.update({part.file: render_stub(part, flavor) for part in PARTS})
    return files


def config_text(flavor: str) -> str:
    return f"""\
# grader workspace settings. Uncomment a line to change it.
flavor = "{flavor}"

# timeout = 10                                    # seconds each check may run
# parts = ["part1", "part2", "part3", "part4"]    # the parts graded by default

# [points]            # each part's share of the score
# part1 = 20
# part2 = 15
# part3 = 35
# part4 = 30

# [budgets]           # minutes per part in a mock interview
# part1 = 10
# part2 = 10
# part3 = 25
# part4 = 30

# [mock]
# minutes = 75

# [gradescope]        # when candidates see their results on Gradescope
# visibility = "visible"    # or "hidden", "after_due_date", "after_published"
"""


def init_workspace(directory: Path, flavor: str = DEFAULT_FLAVOR) -> Workspace:
    """Write a fresh workspace at `directory`; refuse to touch one that already has work in it."""
    if flavor not in FLAVORS:
        raise WorkspaceError(f"unknown flavor {flavor!r}; choose one of: {', '.join(FLAVORS)}")
    directory = directory.resolve()
    if directory.exists() and not directory.is_dir():
        raise WorkspaceError(f"{directory} exists and is not a folder")
    taken = [p for p in (directory / CONFIG_NAME, directory / EXERCISES_DIR) if p.exists()]
    if taken:
        names = ", ".join(str(p) for p in taken)
        raise WorkspaceError(
            f"{names} already exists: not overwriting anyone's work "
            "(choose an empty folder, or use `grader reset` inside a workspace)"
        )
    exercises = directory / EXERCISES_DIR
    exercises.mkdir(parents=True)
    for name, text in pristine_files(flavor).items():
        (exercises / name).write_text(text)
    (directory / CONFIG_NAME).write_text(config_text(flavor))
    return Workspace(root=directory, flavor=flavor)


def read_config(path: Path) -> dict[str, object]:
    """Parse a grader.toml; a syntax error becomes a WorkspaceError naming the file."""
    try:
        return tomllib.loads(path.read_text())
    except tomllib.TOMLDecodeError as exc:
        raise WorkspaceError(f"{path}: not valid TOML: {exc}") from exc
    except OSError as exc:
        raise WorkspaceError(f"{path}: cannot read: {exc.strerror}") from exc


def load_config(path: Path) -> tuple[str, Settings]:
    """The flavor and validated settings of one grader.toml: a workspace's, or an instructor's
    file on its own (batch grading and Gradescope read one without any exercises/ beside it)."""
    config = read_config(path)
    flavor = config.get("flavor", DEFAULT_FLAVOR)
    if flavor not in FLAVORS:
        raise WorkspaceError(f"{path}: flavor must be one of {', '.join(FLAVORS)}, got {flavor!r}")
    return str(flavor), _parse_settings(config, str(path))


def load_workspace(root: Path, require_exercises: bool = True) -> Workspace:
    """Load the workspace rooted exactly at `root`, validating its config.

    `require_exercises=False` is for `grader reset`, which must be able to bring back an
    exercises/ folder that was deleted.
    """
    root = root.resolve()
    if not (root / CONFIG_NAME).is_file():
        raise WorkspaceError(
            f"{root} is not a grader workspace (no {CONFIG_NAME}); "
            "create one with `grader init DIR`"
        )
    flavor, settings = load_config(root / CONFIG_NAME)
    if require_exercises and not (root / EXERCISES_DIR).is_dir():
        raise WorkspaceError(f"{root} has no {EXERCISES_DIR}/ folder")
    return Workspace(root=root, flavor=flavor, settings=settings)


def _positive_number(value: object, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not value > 0:
        raise WorkspaceError(f"{where} must be a positive number, got {value!r}")
    return float(value)


def _per_part(config: dict[str, object], table: str, where: str) -> dict[str, float]:
    raw = config.get(table, {})
    if not isinstance(raw, dict):
        raise WorkspaceError(f"{where}: [{table}] must be a table of part = number")
    unknown = sorted(set(raw) - set(PART_IDS))
    if unknown:
        raise WorkspaceError(f"{where}: [{table}] names unknown part(s) {', '.join(unknown)}; "
                             f"valid parts: {', '.join(PART_IDS)}")
    return {part: _positive_number(v, f"{where}: {table}.{part}") for part, v in raw.items()}


def parse_settings(config: dict[str, object], root: Path) -> Settings:
    """Validate the instructor settings of the workspace at `root`."""
    return _parse_settings(config, str(root / CONFIG_NAME))


def _gradescope_visibility(config: dict[str, object], where: str) -> str:
    table = config.get("gradescope", {})
    if not isinstance(table, dict) or set(table) - {"visibility"}:
        raise WorkspaceError(f"{where}: [gradescope] takes only visibility = <string>")
    visibility = table.get("visibility", "visible")
    if visibility not in GRADESCOPE_VISIBILITIES:
        raise WorkspaceError(f"{where}: gradescope.visibility must be one of "
                             f"{', '.join(GRADESCOPE_VISIBILITIES)}, got {visibility!r}")
    return str(visibility)


def _parse_settings(config: dict[str, object], where: str) -> Settings:
    """Validate grader.toml's instructor settings; each bad value gets its own clear error."""
    known = {"flavor", "timeout", "parts", "points", "budgets", "mock", "gradescope"}
    unknown = sorted(set(config) - known)
    if unknown:
        raise WorkspaceError(f"{where}: unknown setting(s) {', '.join(unknown)}; "
                             f"known: {', '.join(sorted(known))}")
    timeout = config.get("timeout")
    enabled = config.get("parts", list(PART_IDS))
    if not isinstance(enabled, list) or not enabled or any(p not in PART_IDS for p in enabled):
        raise WorkspaceError(f"{where}: parts must be a non-empty list drawn from "
                             f"{', '.join(PART_IDS)}, got {enabled!r}")
    mock = config.get("mock", {})
    if not isinstance(mock, dict) or set(mock) - {"minutes"}:
        raise WorkspaceError(f"{where}: [mock] takes only minutes = <number>")
    return Settings(
        timeout_s=None if timeout is None else _positive_number(timeout, f"{where}: timeout"),
        enabled=tuple(p for p in PART_IDS if p in enabled),
        points=_per_part(config, "points", where),
        budgets_minutes=_per_part(config, "budgets", where),
        mock_minutes=_positive_number(mock.get("minutes", 75), f"{where}: mock.minutes"),
        gradescope_visibility=_gradescope_visibility(config, where),
    )


def find_config(start: Path | None = None) -> Path | None:
    """The grader.toml in `start` (default: the current folder) or its nearest parent."""
    here = (start or Path(os.getcwd())).resolve()
    for folder in (here, *here.parents):
        if (folder / CONFIG_NAME).is_file():
            return folder / CONFIG_NAME
    return None


def find_workspace(start: Path | None = None, require_exercises: bool = True) -> Workspace:
    """The workspace containing `start` (default: the current folder) or one of its parents."""
    config = find_config(start)
    if config is None:
        here = (start or Path(os.getcwd())).resolve()
        raise WorkspaceError(
            f"no grader workspace here or above {here} (looked for {CONFIG_NAME}); "
            "run `grader init DIR` to create one, or pass --workspace DIR"
        )
    return load_workspace(config.parent, require_exercises)


def bundled_path(name: str) -> Path:
    """A folder shipped with grader: inside the wheel, or at the repo root in a checkout."""
    package_dir = Path(__file__).resolve().parent
    for candidate in (package_dir / "_bundled" / name, package_dir.parent / name):
        if candidate.is_dir():
            return candidate
    raise WorkspaceError(f"grader is installed without its {name}/ folder; reinstall it")
