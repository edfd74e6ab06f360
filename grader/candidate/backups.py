"""Reset, backups and restore: a coach can wipe a workspace between candidates without fear.

A backup is a snapshot of what a candidate owns in a workspace: every file under exercises/
(except __pycache__) and the progress records `.grader/last.json` and `.grader/hints.json`. Reset
and restore both work the same way: compute the target contents, diff them against what is on
disk, and, only when something would change, first write a verified backup of the current
files, then apply the diff file by file with atomic replaces. So every change is preceded by a
backup that holds everything it overwrites or removes, and no sequence of resets and restores
can lose work.

Backups live in `.grader/backups/<YYYYmmdd-HHMMSS>[-N]/` with a manifest of SHA-256 digests; a
backup is built under a hidden temporary name and renamed into place, so a half-written one is
never listed, and two in the same second get distinct names.
"""

from __future__ import annotations

import errno
import hashlib
import json
import os
import shutil
import stat
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path, PurePosixPath
from typing import Literal

from grader.engine.documents import Unreadable, json_document
from grader.engine.state import (
    HINTS,
    LAST_RESULTS,
    read_json,
    regular_file_bytes,
    write_bytes_atomic,
)
from grader.engine.workspace import (
    EXERCISES_DIR,
    STATE_DIR,
    Workspace,
    WorkspaceError,
    link_on_the_way,
    pristine_files,
)

BACKUPS_DIR = "backups"
MANIFEST = "manifest.json"
FILES_DIR = "files"
PROGRESS_FILES = (LAST_RESULTS, HINTS)
SKIPPED_DIRS = {"__pycache__"}

Contents = dict[str, bytes]
"""Workspace-relative POSIX path -> bytes, for every file a backup keeps."""


class BackupError(WorkspaceError):
    """A backup cannot be made, found or trusted; nothing was changed."""


@dataclass(frozen=True)
class Backup:
    """One backup folder, as its manifest describes it."""

    name: str
    path: Path
    created: str
    sequence: int
    reason: str
    digests: dict[str, str]
    changed_parts: tuple[str, ...]

    def file(self, rel: str) -> Path:
        return self.path / FILES_DIR / rel


@dataclass(frozen=True)
class Change:
    """One file a reset or restore writes or removes."""

    rel: str
    action: Literal["create", "overwrite", "remove"]


@dataclass(frozen=True)
class Outcome:
    """What a reset or restore did: the backup taken first (None when nothing changed)."""

    backup: Backup | None
    changes: tuple[Change, ...]


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _progress_rel(name: str) -> str:
    return f"{STATE_DIR}/{name}"


BACKUP_FILE_BYTES = 64 << 20
"""The largest file a backup keeps: an exercise is a few KiB, and a backup holds each file in
memory and writes it out whole (a sparse file of gigabytes would fill both)."""


def current_contents(workspace: Workspace) -> Contents:
    """Everything a backup keeps, as it is on disk now: the regular files themselves, never
    what a link points at (a link in exercises/ to a file only root may read would put its
    bytes in a backup anyone may read, where a coach resets as root); links are left where
    they are. BackupError for a file past BACKUP_FILE_BYTES: nothing is changed, and the
    message says which to move away."""
    contents: Contents = {}
    exercises = workspace.exercises
    if exercises.is_dir() and not exercises.is_symlink():
        for folder, dirs, files in os.walk(exercises):
            dirs[:] = sorted(d for d in dirs if d not in SKIPPED_DIRS)
            for name in sorted(files):
                _keep(contents, Path(folder) / name, workspace)
    for name in PROGRESS_FILES:
        _keep(contents, workspace.state_dir / name, workspace)
    return contents


def _keep(contents: Contents, path: Path, workspace: Workspace) -> None:
    """`path`'s bytes into `contents` where it is a regular file (not a link to one)."""
    try:
        status = path.lstat()
    except OSError:
        return
    if not stat.S_ISREG(status.st_mode):
        return
    rel = path.relative_to(workspace.root).as_posix()
    if status.st_size > BACKUP_FILE_BYTES:
        raise BackupError(f"{rel} is {status.st_size} bytes, more than a backup keeps "
                          f"({BACKUP_FILE_BYTES >> 20} MiB): move it out of the workspace, "
                          "then run this again (nothing was changed)")
    data = regular_file_bytes(path)
    if data is not None:
        contents[rel] = data


def _pristine_part_files(workspace: Workspace) -> Contents:
    return {f"{EXERCISES_DIR}/{name}": text.encode()
            for name, text in pristine_files(workspace.round, workspace.flavor).items()}


def changed_parts(workspace: Workspace, contents: Contents) -> tuple[str, ...]:
    """The parts whose file differs from (or is missing against) the pristine stub."""
    pristine = _pristine_part_files(workspace)
    return tuple(part.id for part in workspace.round.parts_for(workspace.flavor)
                 if contents.get(f"{EXERCISES_DIR}/{part.file}")
                 != pristine[f"{EXERCISES_DIR}/{part.file}"])


def _without_parts(data: bytes, part_ids: Sequence[str]) -> bytes | None:
    """A progress record minus the given parts; None when nothing is left."""
    try:
        record = json_document(data)
    except Unreadable:
        return None
    if not isinstance(record, dict):
        return None
    kept = {k: v for k, v in record.items() if k not in part_ids}
    if kept == record:
        return data
    return json.dumps(kept, indent=2).encode() if kept else None


def _place(target: Contents, rel: str, data: bytes) -> None:
    """target[rel] = data, without what stands in the way: files below rel (a folder made
    where the file belongs) and a file where one of rel's folders belongs. The backup taken
    before any change holds them."""
    for other in [o for o in target if o.startswith(f"{rel}/") or rel.startswith(f"{o}/")]:
        del target[other]
    target[rel] = data


def reset_target(workspace: Workspace, part_ids: Sequence[str] | None) -> Contents:
    """What the workspace should hold after resetting the parts (None: everything).

    A full reset gives exactly a fresh workspace: the pristine files, nothing else, and no
    progress records. A part reset rewrites those parts' files and forgets their records.
    """
    current = current_contents(workspace)
    pristine = _pristine_part_files(workspace)
    if part_ids is None:
        return pristine
    target = dict(current)
    for part_id in part_ids:
        rel = f"{EXERCISES_DIR}/{workspace.round.part(part_id).file}"
        _place(target, rel, pristine[rel])
    for name in PROGRESS_FILES:
        rel = _progress_rel(name)
        if rel in target:
            kept = _without_parts(target[rel], part_ids)
            if kept is None:
                del target[rel]
            else:
                target[rel] = kept
    return target


def diff(current: Contents, target: Contents) -> tuple[Change, ...]:
    """The writes and removals that turn `current` into `target`."""
    changes = [Change(rel, "overwrite" if rel in current else "create")
               for rel, data in target.items() if current.get(rel) != data]
    changes += [Change(rel, "remove") for rel in current if rel not in target]
    return tuple(sorted(changes, key=lambda c: c.rel))


def plan_reset(workspace: Workspace, part_ids: Sequence[str] | None) -> tuple[Change, ...]:
    return diff(current_contents(workspace), reset_target(workspace, part_ids))


def plan_restore(workspace: Workspace, backup: Backup) -> tuple[Change, ...]:
    return diff(current_contents(workspace), read_backup(backup))


def reset(workspace: Workspace, part_ids: Sequence[str] | None,
          now: datetime | None = None) -> Outcome:
    """Back up, then reset the parts (None: the whole workspace) to the pristine stubs."""
    what = "all parts" if part_ids is None else ", ".join(part_ids)
    return _apply(workspace, reset_target(workspace, part_ids), f"before reset of {what}", now)


def write_part(workspace: Workspace, part_id: str, source: str,
               now: datetime | None = None) -> Outcome:
    """Make a part's exercise file hold `source` (a notebook cell's code), after a backup of
    what it replaces when that differs: a cell run by mistake can always be undone with
    `grader restore`."""
    part = workspace.round.part(part_id)
    try:
        data = source.encode()
    except UnicodeEncodeError as exc:
        line = source.count("\n", 0, exc.start) + 1
        raise WorkspaceError(f"line {line} of the cell holds {source[exc.start]!r}, half of a "
                             "character (a lone surrogate), which no file can hold: nothing "
                             "was saved") from None
    target = dict(current_contents(workspace))
    _place(target, f"{EXERCISES_DIR}/{part.file}", data)
    return _apply(workspace, target, f"before a notebook cell wrote {part_id}", now)


def restore(workspace: Workspace, backup: Backup, now: datetime | None = None) -> Outcome:
    """Back up the current files, then bring the workspace back to exactly the backup."""
    return _apply(workspace, read_backup(backup), f"before restore of {backup.name}", now)


def _apply(workspace: Workspace, target: Contents, reason: str,
           now: datetime | None) -> Outcome:
    """Make the workspace hold `target`, after a verified backup of whatever would change."""
    current = current_contents(workspace)
    changes = diff(current, target)
    if not changes:
        return Outcome(None, ())
    for change in changes:
        _no_link_on_the_way(workspace.root, change.rel)
    backup = create_backup(workspace, reason, now, current)
    # Removals first: a file that stands where the target has a folder (or a folder, emptied
    # by them, where it has a file) is out of the way before anything is written there.
    for change in sorted(changes, key=lambda c: c.action != "remove"):
        path = workspace.root / change.rel
        if change.action == "remove":
            path.unlink(missing_ok=True)
            _prune_empty_folders(path.parent, workspace.exercises)
        else:
            write_bytes_atomic(path, target[change.rel])
    return Outcome(backup, changes)


def _no_link_on_the_way(root: Path, rel: str) -> None:
    """BackupError, before anything changes, where a folder on the way to `rel` is a link: a
    write or a removal through it would land outside the workspace (exercises/sub linked to
    /etc, and a backup naming exercises/sub/x)."""
    linked = link_on_the_way(root, PurePosixPath(rel).parts[:-1])
    if linked is not None:
        raise BackupError(f"{linked} is a link, and {rel} would be written through it; "
                          "nothing was changed")


def _prune_empty_folders(folder: Path, stop: Path) -> None:
    """Remove folders a removal emptied, below exercises/ only (never exercises/ itself).
    Only what no backup needs goes: a folder left holding nothing but Python's bytecode caches
    (files Python writes again) is removed; one with anything else in a cache folder stays,
    since backups do not hold cache folders."""
    while folder != stop and folder.is_relative_to(stop):
        entries = list(folder.iterdir())
        if any(p.name not in SKIPPED_DIRS or not _bytecode_only(p) for p in entries):
            return
        for cache in entries:
            shutil.rmtree(cache)
        folder.rmdir()
        folder = folder.parent


def _bytecode_only(cache: Path) -> bool:
    """Whether a cache folder holds bytecode only (.pyc files, in folders of their own)."""
    if cache.is_symlink() or not cache.is_dir():
        return False
    return all(p.is_dir() and not p.is_symlink() or p.suffix == ".pyc" and p.is_file()
               and not p.is_symlink() for p in cache.rglob("*"))


def backups_root(workspace: Workspace) -> Path:
    return workspace.state_folder(BACKUPS_DIR)


def _write_synced(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "wb") as handle:
        handle.write(data)
        handle.flush()
        os.fsync(handle.fileno())


def create_backup(workspace: Workspace, reason: str, now: datetime | None = None,
                  contents: Contents | None = None) -> Backup:
    """Write a backup of `contents` (default: the current files) and check it reads back."""
    contents = current_contents(workspace) if contents is None else contents
    now = now or datetime.now()
    root = backups_root(workspace)
    root.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(dir=root, prefix=".incomplete-"))
    try:
        for rel, data in contents.items():
            _write_synced(staging / FILES_DIR / rel, data)
        manifest = {
            "created": now.isoformat(timespec="seconds"),
            "sequence": 1 + max((b.sequence for b in list_backups(workspace)), default=0),
            "reason": reason,
            "round": workspace.round.id,
            "flavor": workspace.flavor,
            "files": {rel: _digest(data) for rel, data in contents.items()},
            "changed_parts": list(changed_parts(workspace, contents)),
        }
        _write_synced(staging / MANIFEST, json.dumps(manifest, indent=2).encode())
        final = _rename_free(staging, root, now.strftime("%Y%m%d-%H%M%S"))
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    backup = load_backup(final)
    if backup is None or read_backup(backup) != contents:
        raise BackupError(f"the backup at {final} does not read back as written; "
                          "nothing was changed")
    return backup


def _rename_free(staging: Path, root: Path, stem: str) -> Path:
    """Rename the finished backup to `stem`, or `stem-2`, `stem-3`, ... whichever is free."""
    counter = 1
    while True:
        final = root / (stem if counter == 1 else f"{stem}-{counter}")
        if not final.exists():
            try:
                os.rename(staging, final)
                return final
            except OSError as exc:
                if exc.errno not in (errno.EEXIST, errno.ENOTEMPTY):
                    raise
        counter += 1


def load_backup(path: Path) -> Backup | None:
    """The backup in `path`, or None when it has no readable manifest (not one of ours)."""
    manifest = read_json(path / MANIFEST, None)
    if not isinstance(manifest, dict) or not isinstance(manifest.get("files"), dict):
        return None
    sequence, parts = manifest.get("sequence", 0), manifest.get("changed_parts", [])
    if not (isinstance(sequence, int) and not isinstance(sequence, bool)
            and isinstance(parts, list) and all(isinstance(p, str) for p in parts)):
        return None  # a manifest of ours has these types: a damaged or forged one is not ours
    return Backup(
        name=path.name, path=path, created=str(manifest.get("created", "")),
        sequence=sequence, reason=str(manifest.get("reason", "")),
        digests={str(k): str(v) for k, v in manifest["files"].items()},
        changed_parts=tuple(parts),
    )


def list_backups(workspace: Workspace) -> list[Backup]:
    """Every finished backup, oldest first."""
    root = backups_root(workspace)
    if not root.is_dir():
        return []
    found = [load_backup(p) for p in root.iterdir() if p.is_dir() and not p.name.startswith(".")]
    return sorted((b for b in found if b), key=lambda b: (b.sequence, b.created, b.name))


def find_backup(workspace: Workspace, name: str | None = None) -> Backup:
    """The backup called `name` (or the only one starting with it); the latest when None."""
    backups = list_backups(workspace)
    if not backups:
        raise BackupError(f"no backups in {backups_root(workspace)} yet")
    if name is None:
        return backups[-1]
    exact = [b for b in backups if b.name == name]
    matches = exact or [b for b in backups if b.name.startswith(name)]
    if len(matches) == 1:
        return matches[0]
    known = ", ".join(b.name for b in backups[-5:])
    if not matches:
        raise BackupError(f"no backup called {name!r}; the latest are: {known} "
                          "(see `grader backups`)")
    raise BackupError(f"{name!r} matches several backups: "
                      f"{', '.join(b.name for b in matches)}")


def _kept_path(rel: str) -> bool:
    """Whether a backup could hold `rel`: a file below exercises/ or a progress record, named
    without `..` (a backup's manifest is a file in the workspace, which anyone could edit)."""
    path = PurePosixPath(rel)
    return not path.is_absolute() and ".." not in path.parts and (
        path.parts[:1] == (EXERCISES_DIR,) and len(path.parts) > 1
        or rel in {_progress_rel(name) for name in PROGRESS_FILES})


def read_backup(backup: Backup) -> Contents:
    """The backup's files, each checked against the manifest's digest."""
    contents: Contents = {}
    for rel, digest in backup.digests.items():
        if not _kept_path(rel):
            raise BackupError(f"backup {backup.name} names an unsafe path {rel!r}")
        try:
            data = backup.file(rel).read_bytes()
        except OSError as exc:
            raise BackupError(f"backup {backup.name} is damaged: cannot read {rel} "
                              f"({exc.strerror}); nothing was changed") from exc
        if _digest(data) != digest:
            raise BackupError(f"backup {backup.name} is damaged: {rel} does not match its "
                              "digest; nothing was changed")
        contents[rel] = data
    return contents
