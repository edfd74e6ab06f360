"""Turning what candidates hand in into folders the runner can grade.

A submission is a workspace folder, a folder holding the round's exercise files, or a .zip of
either (possibly wrapped in one more folder, the way "compress this folder" makes them). Each
one is copied into a private staging folder as `<stage>/exercises/`: grading never writes into
a submission (not even __pycache__), and a zip is never extracted wholesale. Only the files
below the one folder that holds the exercise files are taken, each checked for an unsafe path
(absolute, `..`, a link) and capped in size while it is read, so a hostile or broken archive
becomes a clear one-line problem for its own row instead of a crash or a full disk.

Symbolic links are never followed: through one, a submission could hand in a classmate's folder
or files as its own, or loop. A submission that is a link is refused; a link inside one is left
out, and its row says so (a zip holding a link is refused whole, as it always was).

A submission's name, the names of its files and zip members and the round and flavor its
grader.toml names are the candidate's to choose, in any bytes: what `stage` returns to show
(its source, problem and notes, the declared round and flavor) is valid, bounded text
(grader/engine/safe_text.py), a byte that is not UTF-8 shown as `\\xNN`.
"""

from __future__ import annotations

import os
import stat
import struct
import zipfile
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path, PurePosixPath

from grader.engine.documents import Unreadable, toml_document
from grader.engine.rounds import Round
from grader.engine.safe_text import NOTE_LIMIT, WORD_LIMIT, received, received_name
from grader.engine.workspace import CONFIG_NAME, EXERCISES_DIR, MAX_CONFIG_BYTES

MAX_DEPTH = 4
MAX_FILES = 200
MAX_FILE_BYTES = 1 << 20
MAX_TOTAL_BYTES = 16 << 20
MAX_ZIP_MEMBERS = 20_000
IGNORED_DIRS = {"__pycache__", "__MACOSX", "node_modules", "site-packages"}
INIT_TEXT = '"""Submitted exercises."""\n'


class SubmissionError(Exception):
    """Why a submission cannot be graded at all, in one line for its row."""


@dataclass(frozen=True)
class Staged:
    """A submission made ready for the runner, or the reason it cannot be."""

    source: str
    root: Path | None
    problem: str | None = None
    notes: tuple[str, ...] = ()
    missing: tuple[str, ...] = ()
    declared_flavor: str | None = None
    declared_round: str | None = None


def part_files(round_: Round) -> tuple[str, ...]:
    """The exercise file names of a round, over all its flavors."""
    return tuple(dict.fromkeys(p.file for p in round_.parts))


def _ignored(name: str) -> bool:
    return name.startswith(".") or name in IGNORED_DIRS


def _holds_exercises(folder: Path, names: tuple[str, ...]) -> bool:
    return any((folder / name).is_file() for name in names)


def is_single_submission(folder: Path, names: tuple[str, ...]) -> bool:
    """A workspace, or a folder with the exercise files in it or in its exercises/."""
    return ((folder / CONFIG_NAME).is_file() or _holds_exercises(folder, names)
            or _holds_exercises(folder / EXERCISES_DIR, names))


def expand(path: Path, round_: Round) -> list[Path]:
    """A folder of submissions becomes its entries (subfolders, .zip files, and links or
    special files named like one, which get a row saying they were refused); anything else is
    one submission, even when it turns out to be broken. A folder that looks like one
    submission (a workspace, its exercise files) is one unless two of its entries or more
    are submissions themselves. A hidden entry (`.git`, `.cache`) is left out unless it is a
    zip or holds a submission's files: a candidate's folder named with a leading dot still
    gets its row."""
    names = part_files(round_)
    if not path.is_dir():
        return [path]
    entries = sorted(p for p in path.iterdir()
                     if (p.is_symlink() or p.is_dir() or p.suffix.lower() == ".zip")
                     and (not _ignored(p.name) or _handed_in(p, names)))
    if is_single_submission(path, names) \
            and sum(_handed_in(p, names) for p in entries if p.name != EXERCISES_DIR) < 2:
        return [path]
    # A folder of two submissions or more is a batch, whatever else it holds: a coach's
    # grader.toml beside them, or one hand-in named exercises/ or left as loose part files,
    # which get rows of their own.
    loose = [p for p in path.iterdir()
             if p.name in names and not p.is_symlink() and not p.is_dir()]
    return sorted({*entries, *loose}) or [path]


def _handed_in(entry: Path, names: tuple[str, ...]) -> bool:
    """Whether a hidden entry of a folder of submissions is one all the same."""
    if entry.is_symlink():
        return False
    return entry.suffix.lower() == ".zip" or (entry.is_dir()
                                              and is_single_submission(entry, names))


def _safe_relative(name: str) -> PurePosixPath:
    """A zip member's path, refused when it could land outside the staging folder."""
    rel = PurePosixPath(name.replace("\\", "/"))
    if rel.is_absolute() or ".." in rel.parts or (rel.parts and ":" in rel.parts[0]):
        raise SubmissionError(f"unsafe path in the zip: {name!r}; nothing was extracted")
    return rel


def find_exercise_folder(files: Iterable[PurePosixPath],
                         names: tuple[str, ...]) -> PurePosixPath:
    """The one folder holding exercise files: the shallowest, `exercises` winning a tie."""
    files = list(files)
    holders = Counter(f.parent for f in files if f.name in names)
    if not holders:
        found = sorted({f.name for f in files if f.suffix == ".py"})[:5]
        seen = f"; found only: {', '.join(found)}" if found else ""
        raise SubmissionError(f"no exercise files found (expected {', '.join(names)}, "
                              f"or a workspace with {EXERCISES_DIR}/){seen}")
    depth = min(len(folder.parts) for folder in holders)
    shallowest = sorted(f for f in holders if len(f.parts) == depth)
    if len(shallowest) == 1:
        return shallowest[0]
    named = [f for f in shallowest if f.name == EXERCISES_DIR]
    if len(named) == 1:
        return named[0]
    raise SubmissionError("exercise files in several folders "
                          f"({', '.join(str(f) or '.' for f in shallowest)}); hand in one set")


class _Budget:
    """The caps on what one submission may put in its staging folder."""

    def __init__(self) -> None:
        self.files = 0
        self.total = 0

    def admit(self, rel: PurePosixPath, size: int) -> None:
        self.files += 1
        self.total += size
        if size > MAX_FILE_BYTES:
            raise SubmissionError(f"{rel} is larger than {MAX_FILE_BYTES >> 20} MiB")
        if self.files > MAX_FILES or self.total > MAX_TOTAL_BYTES:
            raise SubmissionError(f"too much to grade: more than {MAX_FILES} files or "
                                  f"{MAX_TOTAL_BYTES >> 20} MiB next to the exercises")


@dataclass(frozen=True)
class _Entry:
    """A file of a submission, not read yet: its size as declared, and how to read it."""

    size: int
    read: Callable[[], bytes]


def _below(rel: PurePosixPath, folder: PurePosixPath) -> PurePosixPath | None:
    if folder == PurePosixPath("."):
        return rel
    return rel.relative_to(folder) if rel.is_relative_to(folder) else None


def _declared(text: bytes | None) -> tuple[str | None, str | None]:
    """The (round, flavor) a submitted grader.toml names, where it is readable: only ever a
    note, or the flavor to grade in when the instructor sets none."""
    if text is None or len(text) > MAX_CONFIG_BYTES:
        return None, None
    try:
        config = toml_document(text.decode())
    except (UnicodeDecodeError, Unreadable):
        return None, None
    round_, flavor = config.get("round"), config.get("flavor")
    return (round_ if isinstance(round_, str) else None,
            flavor if isinstance(flavor, str) else None)


def _collect(source: str, dest: Path, listing: dict[PurePosixPath, _Entry],
             names: tuple[str, ...], links: tuple[PurePosixPath, ...] = ()) -> Staged:
    """Copy the files below the exercise folder into dest/exercises/, within the caps; the
    links below it that were left out are named in a note."""
    try:
        folder = find_exercise_folder(listing, names)
    except SubmissionError as exc:
        if not links:
            raise
        raise SubmissionError(f"{exc}; {_links_note(links)}") from None
    exercises = dest / EXERCISES_DIR
    exercises.mkdir(parents=True)
    budget = _Budget()
    config: bytes | None = None
    for rel, entry in listing.items():
        inner = _below(rel, folder)
        if rel == folder.parent / CONFIG_NAME and entry.size <= MAX_CONFIG_BYTES:
            config = entry.read()
        if inner is None:
            continue
        budget.admit(rel, entry.size)
        target = exercises / inner
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(entry.read())
    if not (exercises / "__init__.py").exists():
        (exercises / "__init__.py").write_text(INIT_TEXT)
    missing = tuple(name for name in names if not (exercises / name).is_file())
    notes: tuple[str, ...] = (f"missing {', '.join(missing)}",) if missing else ()
    inside = tuple(link for link in links if _below(link, folder) is not None)
    if inside:
        notes += (_links_note(inside),)
    declared_round, declared_flavor = _declared(config)
    return Staged(source, dest, None, notes, missing, declared_flavor, declared_round)


def _links_note(links: tuple[PurePosixPath, ...]) -> str:
    shown = ", ".join(str(link) for link in links[:5])
    more = f" and {len(links) - 5} more" if len(links) > 5 else ""
    return ("links (symbolic or hard) and special files are not read, so these were left "
            f"out: {shown}{more}")


def _read_no_link(path: Path) -> Callable[[], bytes]:
    """How to read a regular file, refusing it should it have become a link since the walk."""
    def read() -> bytes:
        try:
            descriptor = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
        except OSError as exc:
            raise SubmissionError(f"cannot read {path.name}: {exc.strerror}") from exc
        with os.fdopen(descriptor, "rb") as handle:
            return handle.read()

    return read


def _entries(folder: Path) -> Iterator[tuple[PurePosixPath, Path, os.stat_result | None]]:
    """(name below `folder`, path, its lstat, None for a link) of every file and link below
    `folder`, skipping hidden and tool folders and anything deeper than MAX_DEPTH; links to
    folders are not followed."""
    for current, dirs, files in os.walk(folder):
        here = Path(current)
        depth = len(here.relative_to(folder).parts)
        dirs[:] = sorted(d for d in dirs if not _ignored(d) and depth < MAX_DEPTH)
        regular = set(files)
        for name in sorted(dirs + files):
            path = here / name
            if _ignored(name):
                continue
            rel = PurePosixPath(path.relative_to(folder).as_posix())
            if path.is_symlink():
                yield rel, path, None
            elif name in regular:
                yield rel, path, path.lstat()


Inode = tuple[int, int]


@dataclass(frozen=True)
class SharedFiles:
    """The files with several names (hard links) among the submissions of one batch: for each,
    the submissions that hold a name of it, and how many names they hold in all. A file whose
    every name lies in the batch's submissions is theirs to share (a classmate's archive that
    links to someone's file must not cost that someone their row); one with a name anywhere
    else (the coach's files beside the class) is never read."""

    holders: dict[Inode, tuple[str, ...]] = field(default_factory=dict)
    names: dict[Inode, int] = field(default_factory=dict)

    @classmethod
    def among(cls, sources: Sequence[Path]) -> SharedFiles:
        holders: dict[Inode, list[str]] = {}
        names: dict[Inode, int] = {}
        for source in dict.fromkeys(sources):
            if source.is_symlink() or not source.exists():
                continue
            files = _entries(source) if source.is_dir() else [(None, source, source.lstat())]
            for _, _, found in files:
                if found is not None and stat.S_ISREG(found.st_mode) and found.st_nlink > 1:
                    key = (found.st_dev, found.st_ino)
                    names[key] = names.get(key, 0) + 1
                    holders.setdefault(key, [])
                    if str(source) not in holders[key]:
                        holders[key].append(str(source))
        return cls({k: tuple(v) for k, v in holders.items()}, names)

    def others(self, found: os.stat_result, source: Path) -> tuple[str, ...] | None:
        """The other submissions holding names of the file (None: it has names outside the
        batch, and is not read)."""
        key = (found.st_dev, found.st_ino)
        if self.names.get(key, 0) < found.st_nlink:
            return None
        return tuple(h for h in self.holders[key] if h != str(source))


def _walk(folder: Path, shared: SharedFiles
          ) -> tuple[dict[PurePosixPath, _Entry], tuple[PurePosixPath, ...], tuple[str, ...]]:
    """Regular files below `folder` (see _entries); what is left out as no file of the
    submission's own: links (files and folders alike), which are not followed, a file with
    other names outside the batch's submissions (a hard link: what a student's archive,
    unpacked beside the coach's files, can point at), and anything that is no regular file (a
    FIFO, whose opening would wait forever); and the notes on files that are also other
    submissions' (read, and named, so that a coach compares the two)."""
    listing: dict[PurePosixPath, _Entry] = {}
    links: list[PurePosixPath] = []
    notes: list[str] = []
    for rel, path, found in _entries(folder):
        if found is None or not stat.S_ISREG(found.st_mode):
            links.append(rel)
            continue
        if found.st_nlink > 1:
            others = shared.others(found, folder)
            if others is None:
                links.append(rel)
                continue
            if others:
                notes.append(f"{rel} is the same file as one in {', '.join(others)} (a hard "
                             "link): read both")
        listing[rel] = _Entry(found.st_size, _read_no_link(path))
    return listing, tuple(sorted(links)), tuple(notes)


def _stage_folder(source: Path, dest: Path, names: tuple[str, ...],
                  shared: SharedFiles) -> Staged:
    listing, links, shared_notes = _walk(source, shared)
    zips = [rel for rel in listing if len(rel.parts) == 1 and rel.suffix.lower() == ".zip"]
    if len(zips) == 1 and not any(rel.name in names for rel in listing):
        return _stage_zip(source / zips[0], dest, names, shown=str(source))
    staged = _collect(str(source), dest, listing, names, links)
    return replace(staged, notes=(*staged.notes, *shared_notes))


def _member_reader(archive: zipfile.ZipFile, info: zipfile.ZipInfo,
                   rel: PurePosixPath) -> Callable[[], bytes]:
    def read() -> bytes:
        if info.flag_bits & 0x1:
            raise SubmissionError("the zip is password-protected")
        try:
            with archive.open(info) as handle:
                # Never trust the declared size: read one byte past the cap at most.
                data = handle.read(MAX_FILE_BYTES + 1)
        except (zipfile.BadZipFile, OSError, EOFError, NotImplementedError) as exc:
            raise SubmissionError(f"cannot read {info.filename} from the zip ({exc})") from exc
        if len(data) > MAX_FILE_BYTES:
            raise SubmissionError(f"{rel} is larger than {MAX_FILE_BYTES >> 20} MiB")
        return data

    return read


MAX_DIRECTORY_BYTES = MAX_ZIP_MEMBERS * 400
"""The largest central directory (the zip's table of its entries) read: MAX_ZIP_MEMBERS entries
with names of a few hundred bytes. zipfile reads and parses the whole table before anything
can count its entries: one listing two million entries (a 110 MB zip) cost 17.8 s and 1 GB."""

_END = struct.Struct("<4s4H2LH")
_END64_LOCATOR = struct.Struct("<4sLQL")
_END64 = struct.Struct("<4sQ2H2L4Q")


def _directory_size(source: Path) -> tuple[int, int] | None:
    """(entries, bytes) of a zip's central directory, as its end records say (the zip64 one
    where the classic one overflows); None where they cannot be found (zipfile then says what
    is wrong with the file)."""
    try:
        fd = os.open(source, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW)
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            os.close(fd)
            return None
        with os.fdopen(fd, "rb") as handle:
            size = handle.seek(0, os.SEEK_END)
            tail_start = max(0, size - (_END.size + 0xFFFF + _END64_LOCATOR.size))
            handle.seek(tail_start)
            tail = handle.read()
            at = tail.rfind(b"PK\x05\x06")
            if at < 0 or len(tail) - at < _END.size:
                return None
            entries, directory = _END.unpack_from(tail, at)[4:6]
            if entries != 0xFFFF and directory != 0xFFFFFFFF:
                return entries, directory
            locator = at - _END64_LOCATOR.size
            if locator < 0 or tail[locator:locator + 4] != b"PK\x06\x07":
                return None
            handle.seek(_END64_LOCATOR.unpack_from(tail, locator)[2])
            record = handle.read(_END64.size)
            if len(record) < _END64.size or record[:4] != b"PK\x06\x06":
                return None
            entries, directory = _END64.unpack(record)[7:9]
            return entries, directory
    except (OSError, struct.error, ValueError):
        return None


def _stage_zip(source: Path, dest: Path, names: tuple[str, ...],
               shown: str | None = None) -> Staged:
    declared = _directory_size(source)
    if declared is not None and declared[0] > MAX_ZIP_MEMBERS:
        raise SubmissionError(f"the zip holds {declared[0]} entries; at most "
                              f"{MAX_ZIP_MEMBERS} are read")
    if declared is not None and declared[1] > MAX_DIRECTORY_BYTES:
        raise SubmissionError(f"the zip's table of entries takes {declared[1] >> 20} MiB; at "
                              f"most {MAX_DIRECTORY_BYTES >> 20} MiB are read")
    try:
        archive = zipfile.ZipFile(source)
    except (zipfile.BadZipFile, OSError) as exc:
        raise SubmissionError(f"not a readable zip file ({exc})") from exc
    except UnicodeDecodeError as exc:
        raise SubmissionError("a name in the zip is not the UTF-8 the zip says it is; nothing "
                              "was extracted") from exc
    with archive:
        members = archive.infolist()
        if len(members) > MAX_ZIP_MEMBERS:
            raise SubmissionError(f"the zip holds {len(members)} entries; at most "
                                  f"{MAX_ZIP_MEMBERS} are read")
        listing: dict[PurePosixPath, _Entry] = {}
        for info in members:
            rel = _safe_relative(info.filename)
            if stat.S_ISLNK(info.external_attr >> 16):
                raise SubmissionError(f"the zip holds a symbolic link ({info.filename}); "
                                      "nothing was extracted")
            if info.is_dir() or any(_ignored(p) for p in rel.parts) \
                    or len(rel.parts) > MAX_DEPTH + 1:
                continue
            listing[rel] = _Entry(info.file_size, _member_reader(archive, info, rel))
        return _collect(shown or str(source), dest, listing, names)


def stage(source: Path, dest: Path, round_: Round, shared: SharedFiles | None = None) -> Staged:
    """Copy one submission's exercise files into `dest`/exercises/, or say why not; its text
    valid and bounded, whatever its names and files hold."""
    staged = _stage(source, dest, round_, shared or SharedFiles())
    return replace(staged, source=received_name(staged.source),
                   problem=None if staged.problem is None else _note(staged.problem),
                   notes=tuple(map(_note, staged.notes)),
                   declared_flavor=_word(staged.declared_flavor),
                   declared_round=_word(staged.declared_round))


def _note(text: str) -> str:
    return received(text, NOTE_LIMIT, inline=True)


def _word(text: str | None) -> str | None:
    return None if text is None else received(text, WORD_LIMIT, inline=True)


def _stage(source: Path, dest: Path, round_: Round, shared: SharedFiles) -> Staged:
    names = part_files(round_)
    try:
        if source.is_symlink():
            raise SubmissionError(f"a symbolic link (to {os.readlink(source)}): links are "
                                  "never followed, so it was not graded")
        if not source.exists():
            raise SubmissionError("no such file or folder")
        if source.is_dir():
            return _stage_folder(source, dest, names, shared)
        found = source.lstat()
        if not stat.S_ISREG(found.st_mode):
            raise SubmissionError("not a regular file (a FIFO, socket or device): never "
                                  "opened")
        if found.st_nlink > 1 and shared.others(found, source) is None:
            raise SubmissionError("a file with other names elsewhere on the disk (a hard "
                                  "link): not read")
        if zipfile.is_zipfile(source) or source.suffix.lower() == ".zip":
            return _stage_zip(source, dest, names)
        raise SubmissionError("not a folder or a .zip file")
    except SubmissionError as exc:
        return Staged(str(source), None, str(exc))
    except OSError as exc:
        return Staged(str(source), None, f"cannot read it: {exc.strerror or exc}")
    except ValueError as exc:  # what the zip module cannot take in a member (its name, its data)
        return Staged(str(source), None, f"cannot read it: {exc}")
