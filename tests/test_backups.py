"""Reset, backups and restore: byte-identical round trips, and no sequence loses work."""

from __future__ import annotations

import hashlib
import json
import random
import shutil
from datetime import datetime
from pathlib import Path

import pytest
from click.testing import CliRunner

from grader import cli
from grader.candidate import backups
from grader.engine.workspace import (
    Workspace,
    WorkspaceError,
    init_workspace,
    load_workspace,
    pristine_files,
)

NOW = datetime(2025, 3, 1, 9, 30, 0)


@pytest.fixture()
def workspace(tmp_path: Path) -> Workspace:
    return init_workspace(tmp_path / "ws")


def tree(workspace: Workspace) -> dict[str, bytes]:
    """Every file a candidate owns, as bytes (what a round trip must preserve exactly)."""
    return backups.current_contents(workspace)


def candidate_work(workspace: Workspace) -> None:
    """Awkward bytes on purpose: CRLF, no final newline, non-UTF-8, a subfolder, progress."""
    ex = workspace.exercises
    (ex / "part1_inplace.py").write_bytes(b"def prefix_products_out(W, P):\r\n    return P")
    (ex / "part3_backward.py").write_bytes(b"# caf\xe9 \x00 binary-ish\n")
    (ex / "scratch").mkdir()
    (ex / "scratch" / "notes.txt").write_bytes(b"try the scan first\n")
    workspace.state_dir.mkdir(exist_ok=True)
    (workspace.state_dir / "hints.json").write_text(json.dumps({"part1": 2, "part3": 1}))
    (workspace.state_dir / "last.json").write_text(json.dumps({"part1": {"score": 3.0}}))


def pristine_tree(workspace: Workspace) -> dict[str, bytes]:
    pristine = pristine_files(workspace.round, workspace.flavor)
    return {f"exercises/{n}": t.encode() for n, t in pristine.items()}


def run(args: list[str], input: str | None = None):  # noqa: A002 - click's own name
    return CliRunner().invoke(cli.cli, args, input=input, env={"COLUMNS": "200"})


def test_reset_all_then_restore_is_byte_identical(workspace: Workspace) -> None:
    candidate_work(workspace)
    before = tree(workspace)

    outcome = backups.reset(workspace, None, NOW)

    assert tree(workspace) == pristine_tree(workspace)
    assert not (workspace.exercises / "scratch").exists()
    assert outcome.backup is not None
    assert backups.read_backup(outcome.backup) == before
    assert set(outcome.backup.changed_parts) == {"part1", "part3"}

    backups.restore(workspace, backups.find_backup(workspace, outcome.backup.name), NOW)
    assert tree(workspace) == before


def test_reset_one_part_keeps_the_others_and_their_progress(workspace: Workspace) -> None:
    candidate_work(workspace)
    before = tree(workspace)

    backups.reset(workspace, ["part1"], NOW)

    after = tree(workspace)
    assert after["exercises/part1_inplace.py"] == pristine_tree(workspace)[
        "exercises/part1_inplace.py"]
    assert after["exercises/part3_backward.py"] == before["exercises/part3_backward.py"]
    assert after["exercises/scratch/notes.txt"] == before["exercises/scratch/notes.txt"]
    assert json.loads(after[".grader/hints.json"]) == {"part3": 1}
    assert ".grader/last.json" not in after

    backups.restore(workspace, backups.find_backup(workspace), NOW)
    assert tree(workspace) == before


def test_write_part_backs_up_what_it_replaces_and_touches_nothing_else(
        workspace: Workspace) -> None:
    """A notebook cell (`%%part part1`) run over the candidate's file: only that file changes,
    progress stays, and the backup brings back the bytes it replaced (CRLF and all)."""
    candidate_work(workspace)
    before = tree(workspace)
    cell = "def prefix_products_out(W, P):\n    return P  # caf\u00e9\n"

    outcome = backups.write_part(workspace, "part1", cell, NOW)

    after = tree(workspace)
    assert after == {**before, "exercises/part1_inplace.py": cell.encode()}
    assert [c.rel for c in outcome.changes] == ["exercises/part1_inplace.py"]
    assert outcome.backup is not None and outcome.backup.reason == (
        "before a notebook cell wrote part1")
    assert backups.read_backup(outcome.backup) == before
    assert backups.write_part(workspace, "part1", cell, NOW).backup is None
    backups.restore(workspace, outcome.backup, NOW)
    assert tree(workspace) == before


def test_a_cell_no_file_can_hold_is_one_line_and_changes_nothing(
        workspace: Workspace) -> None:
    """A lone surrogate (half of a character) in a notebook cell cannot be written as UTF-8:
    the magic says so in a line, naming the cell's line, and nothing is saved or backed up."""
    candidate_work(workspace)
    before = tree(workspace)
    with pytest.raises(WorkspaceError,
                       match="line 2 of the cell holds '\\\\ud800', half of a character"):
        backups.write_part(workspace, "part1", "x = 1\ny = '\ud800'\n", NOW)
    assert tree(workspace) == before and backups.list_backups(workspace) == []


def test_nothing_to_change_takes_no_backup(workspace: Workspace) -> None:
    outcome = backups.reset(workspace, None, NOW)
    assert outcome.backup is None and outcome.changes == ()
    assert backups.list_backups(workspace) == []


def test_backups_in_the_same_second_get_distinct_names_and_order(workspace: Workspace) -> None:
    names = []
    for text in ("one", "two", "three"):
        (workspace.exercises / "part2_out_of_place.py").write_text(text)
        outcome = backups.reset(workspace, ["part2"], NOW)
        assert outcome.backup is not None
        names.append(outcome.backup.name)
    assert names == ["20250301-093000", "20250301-093000-2", "20250301-093000-3"]
    assert [b.name for b in backups.list_backups(workspace)] == names
    assert backups.find_backup(workspace).name == names[-1]
    latest = backups.read_backup(backups.find_backup(workspace))
    assert latest["exercises/part2_out_of_place.py"] == b"three"


def test_find_backup_by_prefix_and_clear_errors(workspace: Workspace) -> None:
    with pytest.raises(backups.BackupError, match="no backups"):
        backups.find_backup(workspace)
    for stamp in (datetime(2025, 3, 1, 9, 0), datetime(2025, 3, 2, 9, 0)):
        (workspace.exercises / "part4_scan.py").write_text(str(stamp))
        backups.reset(workspace, ["part4"], stamp)
    assert backups.find_backup(workspace, "20250302").name == "20250302-090000"
    with pytest.raises(backups.BackupError, match="several backups"):
        backups.find_backup(workspace, "202503")
    with pytest.raises(backups.BackupError, match="no backup called 'nope'"):
        backups.find_backup(workspace, "nope")


def test_a_damaged_backup_is_refused_and_nothing_changes(workspace: Workspace) -> None:
    candidate_work(workspace)
    outcome = backups.reset(workspace, None, NOW)
    assert outcome.backup is not None
    outcome.backup.file("exercises/part1_inplace.py").write_bytes(b"tampered")
    before = tree(workspace)
    count = len(backups.list_backups(workspace))

    with pytest.raises(backups.BackupError, match="damaged"):
        backups.restore(workspace, outcome.backup, NOW)
    assert tree(workspace) == before
    assert len(backups.list_backups(workspace)) == count


@pytest.mark.parametrize("rel", ["exercises/linked/evil.sh", "grader.toml",
                                 ".git/hooks/pre-commit", ".grader/mock/session.json"])
def test_a_forged_backup_writes_nowhere_a_backup_could_not_hold(
        workspace: Workspace, tmp_path: Path, rel: str) -> None:
    """A backup's manifest is a file in the workspace: one that names a path through a
    folder linked outside the workspace, or a file no backup holds (the workspace's settings,
    a git hook), is refused before anything changes."""
    outside = tmp_path / "outside"
    outside.mkdir()
    (workspace.exercises / "linked").symlink_to(outside)
    candidate_work(workspace)
    outcome = backups.reset(workspace, ["part1"], NOW)
    assert outcome.backup is not None
    data = b"#!/bin/sh\necho owned\n"
    manifest = json.loads((outcome.backup.path / backups.MANIFEST).read_text())
    manifest["files"][rel] = hashlib.sha256(data).hexdigest()
    (outcome.backup.path / backups.MANIFEST).write_text(json.dumps(manifest))
    outcome.backup.file(rel).parent.mkdir(parents=True, exist_ok=True)
    outcome.backup.file(rel).write_bytes(data)
    before, settings = tree(workspace), (workspace.root / "grader.toml").read_bytes()

    with pytest.raises(backups.BackupError, match="unsafe path|is a link"):
        backups.restore(workspace, backups.find_backup(workspace, outcome.backup.name), NOW)
    assert tree(workspace) == before
    assert list(outside.iterdir()) == []
    assert (workspace.root / "grader.toml").read_bytes() == settings
    assert not (workspace.root / ".git").exists()


@pytest.mark.parametrize("linked", [".grader", ".grader/backups"])
def test_no_backup_is_written_through_a_linked_state_folder(
        workspace: Workspace, tmp_path: Path, linked: str) -> None:
    """A workspace handed in with its state folder (or its backups) linked elsewhere would
    have a reset, run by a coach as root, write the backup there: it is refused before
    anything changes."""
    outside = tmp_path / "outside"
    outside.mkdir()
    (workspace.root / linked).parent.mkdir(parents=True, exist_ok=True)
    (workspace.root / linked).symlink_to(outside)
    candidate_work_files = {"part1_inplace.py": b"mine\n"}
    for name, data in candidate_work_files.items():
        (workspace.exercises / name).write_bytes(data)
    with pytest.raises(OSError, match="a link where the workspace keeps its state"):
        backups.reset(workspace, None, NOW)
    assert list(outside.iterdir()) == []
    assert (workspace.exercises / "part1_inplace.py").read_bytes() == b"mine\n"


def test_an_unfinished_backup_folder_is_never_listed(workspace: Workspace) -> None:
    root = backups.backups_root(workspace)
    (root / ".incomplete-abc" / "files").mkdir(parents=True)
    (root / "not-ours").mkdir()
    assert backups.list_backups(workspace) == []


def test_reset_brings_back_a_deleted_exercises_folder(workspace: Workspace) -> None:
    candidate_work(workspace)
    before = tree(workspace)
    for path in sorted(workspace.exercises.rglob("*"), reverse=True):
        path.rmdir() if path.is_dir() else path.unlink()
    workspace.exercises.rmdir()

    result = run(["reset", "--all", "--yes", "--workspace", str(workspace.root)])

    assert result.exit_code == 0, result.output
    assert tree(workspace) == pristine_tree(workspace)
    # The backup of the gutted workspace holds the progress records, and the one before
    # still exists: deleting files by hand is the candidate's doing, not ours.
    assert backups.read_backup(backups.find_backup(workspace))[".grader/hints.json"] == \
        before[".grader/hints.json"]


def test_reset_removes_only_what_a_backup_holds_or_python_writes_again(
        workspace: Workspace) -> None:
    """A helper folder the reset empties goes, with its bytecode cache; a file the candidate
    kept in a cache folder (which no backup holds) keeps its folder."""
    helpers = workspace.exercises / "helpers"
    (helpers / "__pycache__").mkdir(parents=True)
    (helpers / "util.py").write_text("x = 1\n")
    (helpers / "__pycache__" / "util.cpython-311.pyc").write_bytes(b"bytecode")
    kept = workspace.exercises / "notes"
    (kept / "__pycache__").mkdir(parents=True)
    (kept / "draft.py").write_text("y = 2\n")
    (kept / "__pycache__" / "keep.txt").write_text("the candidate's own\n")

    result = run(["reset", "--all", "--yes", "--workspace", str(workspace.root)])

    assert result.exit_code == 0, result.output
    assert not helpers.exists()
    assert not (kept / "draft.py").exists()
    assert (kept / "__pycache__" / "keep.txt").read_text() == "the candidate's own\n"
    assert backups.read_backup(backups.find_backup(workspace))["exercises/notes/draft.py"] == \
        b"y = 2\n"


def test_no_sequence_of_resets_and_restores_loses_work(workspace: Workspace) -> None:
    """Random edits, resets and restores: every state a reset or restore replaced stays
    recoverable, on disk or as some backup (edits are the candidate's own doing, a part's
    file turned into a folder of the same name and back among them)."""
    rng = random.Random(4)
    replaced: list[dict[str, bytes]] = []
    parts = ["part1", "part2", "part3", "part4"]
    for step in range(80):
        action = rng.choice(["edit", "edit", "flip", "reset", "reset_all", "restore"])
        name = rng.choice(["part1_inplace.py", "part4_scan.py", "extra.py"])
        path = workspace.exercises / name
        if action == "edit":
            if path.is_dir():
                shutil.rmtree(path)
            path.write_bytes(f"step {step}\n".encode())
            continue
        if action == "flip":
            if path.is_dir():
                shutil.rmtree(path)
                path.write_bytes(f"step {step}\n".encode())
            else:
                path.unlink(missing_ok=True)
                (path / "inside").mkdir(parents=True)
                (path / "inside" / "mine.txt").write_bytes(f"step {step}\n".encode())
            continue
        before = tree(workspace)
        if action == "reset":
            backups.reset(workspace, rng.sample(parts, rng.randint(1, 3)), NOW)
        elif action == "reset_all":
            backups.reset(workspace, None, NOW)
        elif backups.list_backups(workspace):
            backups.restore(workspace, rng.choice(backups.list_backups(workspace)), NOW)
        if tree(workspace) != before:
            replaced.append(before)
    recoverable = [tree(workspace)] + [backups.read_backup(b)
                                       for b in backups.list_backups(workspace)]
    assert len(replaced) > 10
    assert all(state in recoverable for state in replaced)


# --- the CLI ---------------------------------------------------------------------------------

def test_reset_without_a_terminal_or_yes_changes_nothing(workspace: Workspace,
                                                          monkeypatch) -> None:
    monkeypatch.setattr(cli, "someone_can_answer", lambda needs_screen=False: False)
    candidate_work(workspace)
    before = tree(workspace)

    for args in (["reset", "--all"], ["reset", "part1", "part3"]):
        result = run([*args, "--workspace", str(workspace.root)])
        assert result.exit_code == 1
        assert "no terminal to confirm on, so nothing was changed" in result.output
        assert "--yes" in result.output
        assert tree(workspace) == before
    assert not backups.backups_root(workspace).exists()


def test_reset_asks_on_a_terminal(workspace: Workspace, monkeypatch) -> None:
    monkeypatch.setattr(cli, "someone_can_answer", lambda needs_screen=False: True)
    candidate_work(workspace)
    before = tree(workspace)

    declined = run(["reset", "part1", "--workspace", str(workspace.root)], input="n\n")
    assert declined.exit_code == 1
    assert "overwrite exercises/part1_inplace.py" in declined.output
    assert "nothing was changed" in declined.output
    assert tree(workspace) == before

    accepted = run(["reset", "part1", "--workspace", str(workspace.root)], input="y\n")
    assert accepted.exit_code == 0, accepted.output
    name = backups.find_backup(workspace).name
    assert f"Undo with: grader restore {name}" in accepted.output
    assert tree(workspace)["exercises/part1_inplace.py"] != before["exercises/part1_inplace.py"]


def test_reset_needs_parts_or_all_but_not_both(workspace: Workspace) -> None:
    for args in (["reset"], ["reset", "part1", "--all"]):
        result = run([*args, "--yes", "--workspace", str(workspace.root)])
        assert result.exit_code == 2
        assert "name the parts to reset" in result.output


def test_cli_round_trip_and_listing(workspace: Workspace) -> None:
    candidate_work(workspace)
    before = tree(workspace)
    where = ["--workspace", str(workspace.root)]

    assert run(["backups", *where]).output.startswith("No backups yet")
    assert run(["reset", "--all", "--yes", *where]).exit_code == 0
    listing = run(["backups", *where])
    assert "before reset of all parts" in listing.output
    assert "part1, part3" in listing.output and "(latest)" in listing.output

    restored = run(["restore", "--yes", *where])
    assert restored.exit_code == 0, restored.output
    assert tree(workspace) == before
    # The restore backed up the pristine files it replaced: restoring that undoes it.
    assert "before restore of" in run(["backups", *where]).output
    assert run(["restore", "--yes", *where]).exit_code == 0
    assert tree(workspace) == pristine_tree(workspace)


def test_restore_errors_are_one_clear_line(workspace: Workspace) -> None:
    result = run(["restore", "20990101", "--workspace", str(workspace.root)])
    assert result.exit_code == 1
    assert "Error: no backups in" in result.output


def test_reset_uses_the_workspace_flavor(tmp_path: Path) -> None:
    ws = init_workspace(tmp_path / "np", "numpy")
    (ws.exercises / "part2_out_of_place.py").write_text("x = 1\n")
    assert run(["reset", "part2", "--yes", "--workspace", str(ws.root)]).exit_code == 0
    assert "numpy" in (ws.exercises / "part2_out_of_place.py").read_text()
    assert load_workspace(ws.root).flavor == "numpy"


def test_reset_and_restore_keep_each_files_permissions(workspace: Workspace) -> None:
    """A file rewritten by reset or restore keeps the mode its owner gave it; a file they
    create gets a new file's usual mode, not a temporary file's 0600."""
    import os
    import stat

    target = workspace.exercises / "part1_inplace.py"
    target.write_text(target.read_text() + "# mine\n")
    target.chmod(0o754)
    assert run(["reset", "--all", "--yes", "--workspace", str(workspace.root)]).exit_code == 0
    assert stat.S_IMODE(target.stat().st_mode) == 0o754
    target.unlink()
    assert run(["restore", "--yes", "--workspace", str(workspace.root)]).exit_code == 0
    umask = os.umask(0)
    os.umask(umask)
    assert stat.S_IMODE(target.stat().st_mode) == 0o666 & ~umask


def test_a_link_in_exercises_is_left_where_it_is_and_its_target_never_copied(
        workspace: Workspace, tmp_path: Path) -> None:
    """The red team's link to a file only root may read: a reset run by a coach as root keeps
    the candidate's files in its backup, never the bytes a link points at, and leaves the link
    as it was."""
    secret = tmp_path / "secret"
    secret.write_bytes(b"only root reads this\n")
    secret.chmod(0o600)
    candidate_work(workspace)
    (workspace.exercises / "notes.txt").symlink_to(secret)
    outcome = backups.reset(workspace, None, NOW)
    assert outcome.backup is not None
    kept = [p for p in outcome.backup.path.rglob("*") if p.is_file()]
    assert kept and all(b"only root reads this" not in p.read_bytes() for p in kept)
    assert "exercises/notes.txt" not in outcome.backup.digests
    assert (workspace.exercises / "notes.txt").is_symlink()


def test_a_file_too_large_to_back_up_stops_the_reset_before_anything_changes(
        workspace: Workspace) -> None:
    """A sparse file of gigabytes in exercises/ would be read whole and written whole: the
    reset says which file to move and changes nothing."""
    candidate_work(workspace)
    with (workspace.exercises / "huge.bin").open("wb") as handle:
        handle.truncate(backups.BACKUP_FILE_BYTES + 1)
    (workspace.exercises / "huge.bin").chmod(0o644)
    before = {rel: data for rel, data in tree_without(workspace, "exercises/huge.bin").items()}
    result = run(["reset", "--all", "--yes", "--workspace", str(workspace.root)])
    assert result.exit_code == 1
    assert "exercises/huge.bin is" in result.output and "nothing was changed" in result.output
    assert "Traceback" not in result.output
    assert tree_without(workspace, "exercises/huge.bin") == before
    assert backups.list_backups(workspace) == []


def tree_without(workspace: Workspace, skipped: str) -> dict[str, bytes]:
    """The workspace's files but `skipped` (too large for current_contents), read directly."""
    files = [p for p in workspace.exercises.rglob("*") if p.is_file() and "__pycache__" not in
             p.parts]
    return {p.relative_to(workspace.root).as_posix(): p.read_bytes() for p in files
            if p.relative_to(workspace.root).as_posix() != skipped}


@pytest.mark.parametrize("field", [{"sequence": "x"}, {"sequence": True},
                                   {"changed_parts": 5}, {"changed_parts": [1, 2]}])
def test_a_backup_whose_manifest_has_fields_of_the_wrong_type_is_not_listed(
        workspace: Workspace, field: dict[str, object]) -> None:
    """A manifest with a field of a type no backup of ours writes (forged, or damaged) is no
    backup: `grader backups` and `grader reset` go on without it, with no traceback."""
    candidate_work(workspace)
    outcome = backups.reset(workspace, None, NOW)
    assert outcome.backup is not None
    manifest = outcome.backup.path / backups.MANIFEST
    manifest.write_text(json.dumps({**json.loads(manifest.read_text()), **field}))
    assert backups.list_backups(workspace) == []
    listed = run(["backups", "--workspace", str(workspace.root)])
    assert listed.exit_code == 0 and "Traceback" not in listed.output
