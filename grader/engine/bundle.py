"""Folders shipped with grader: the references (and, in a checkout, the repo's own copies)."""

from __future__ import annotations

from pathlib import Path


class BundleError(Exception):
    """grader is installed without one of its folders: a broken install, not a user mistake."""


def bundled_path(name: str) -> Path:
    """A folder shipped with grader: inside the wheel, or at the repo root in a checkout."""
    package_dir = Path(__file__).resolve().parents[1]
    for candidate in (package_dir / "_bundled" / name, package_dir.parent / name):
        if candidate.is_dir():
            return candidate
    raise BundleError(f"grader is installed without its {name}/ folder; reinstall it")
