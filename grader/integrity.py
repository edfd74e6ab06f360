"""The grader's own files, checked before and after the code under test runs.

In practice mode candidate code runs in processes forked from the grader's, as the same user,
so nothing but the file system's permissions keeps it from rewriting the installed package or
its references, whose code the judge runs on every later check. Two checks keep that from
going unnoticed:

- before grading, every file pip installed (a wheel install records each file's sha256 in the
  distribution's RECORD) must still be as recorded: otherwise grading is refused, with the
  command that reinstalls;
- after grading, every file of the package and of the references in use must be as it was
  before: this also covers source checkouts and editable installs, for which pip records no
  hashes of the package's files.

The sandbox (grader.runner.sandbox) mounts all of it read-only, so there these checks confirm
what the mounts already ensure.
"""

from __future__ import annotations

import base64
import hashlib
from importlib import metadata
from pathlib import Path

import grader
from grader.bundle import BundleError, bundled_path

DISTRIBUTION = "prefix-grader"
REINSTALL = f'pip install --force-reinstall --no-deps "{DISTRIBUTION}"'


class IntegrityError(Exception):
    """The grader's own files are not what was installed, or changed during a run."""


def _package_dir() -> Path:
    return Path(grader.__file__).resolve().parent


def _guarded_folders() -> list[Path]:
    folders = [_package_dir()]
    try:
        references = bundled_path("reference").resolve()
    except BundleError:
        return folders
    if not references.is_relative_to(folders[0]):
        folders.append(references)
    return folders


def _counts(path: Path) -> bool:
    return path.is_file() and "__pycache__" not in path.parts and path.suffix != ".pyc"


def snapshot() -> dict[str, str]:
    """sha256 of every file of the package and of the references in use, by path."""
    return {str(path): _sha256(path) for folder in _guarded_folders()
            for path in sorted(folder.rglob("*")) if _counts(path)}


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def recorded() -> dict[str, str]:
    """sha256 (hex) of each installed file inside the package folder in use, from the RECORD
    of a wheel install; empty for a source checkout or an editable install, whose package
    folder pip did not install."""
    try:
        files = metadata.distribution(DISTRIBUTION).files or []
    except metadata.PackageNotFoundError:
        return {}
    package = _package_dir()
    found = {}
    for entry in files:
        if entry.hash is None or entry.hash.mode != "sha256":
            continue
        path = Path(str(entry.locate())).resolve()
        if path.is_relative_to(package):
            padded = entry.hash.value + "=" * (-len(entry.hash.value) % 4)
            found[str(path)] = base64.urlsafe_b64decode(padded).hex()
    return found


def _changed(expected: dict[str, str], found: dict[str, str]) -> list[str]:
    """The files of `expected` that are missing or different in `found`."""
    return [f"{path} changed" if path in found else f"{path} is missing"
            for path, digest in expected.items() if found.get(path) != digest]


def differences(expected: dict[str, str], found: dict[str, str]) -> list[str]:
    """The files of `expected` that are missing or different in `found`, and those added."""
    return _changed(expected, found) + [f"{path} was added" for path in found
                                        if path not in expected]


def check_installed() -> dict[str, str]:
    """The snapshot to compare with after the run; IntegrityError when a file pip installed is
    no longer as installed."""
    now = snapshot()
    expected = recorded()
    changed = _changed(expected, now)
    if changed:
        raise IntegrityError(
            f"the installed grader is not as installed ({_listed(changed)}), so its checks "
            f"cannot be trusted; reinstall it: {REINSTALL}")
    return now


def check_unchanged(before: dict[str, str]) -> None:
    """IntegrityError when a file of the grader changed since `before` (the code under test
    wrote into the grader, or someone edited it meanwhile)."""
    changed = differences(before, snapshot())
    if changed:
        raise IntegrityError(
            f"the grader's own files changed while it ran ({_listed(changed)}): the code "
            "under test may have written into the grader, and no result of this run or a "
            f"later one can be trusted until it is restored (reinstall: {REINSTALL}; in a "
            "source checkout: git checkout -- grader reference)")


def _listed(lines: list[str]) -> str:
    shown = "; ".join(lines[:3])
    return shown + (f"; and {len(lines) - 3} more" if len(lines) > 3 else "")
