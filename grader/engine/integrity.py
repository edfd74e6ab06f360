"""Every file Python would load for the grader, checked before and after the code under test runs.

In practice mode without a sandbox, candidate code runs in processes forked from the grader's,
as the same user: nothing but the file system's permissions keeps it from rewriting what the
next grader process will load (a compiled file in a `__pycache__` whose header still matches
its source, a `.pth` file that site-packages runs at start-up, a `rich.py` earlier on sys.path).
So the judge takes a snapshot before any candidate code runs and compares it with the files
once the run is over, and refuses the run (IntegrityError, saying how to restore) when anything
in it changed.

Covered (a file "changed" when it is added, removed or different; a folder when it is added,
removed or replaced):

1. The grader's package and the references in use (`grader/_bundled/reference`, or a
   checkout's `reference/`): every file, sources, data and compiled files alike, by sha256 of
   its content. Before the run, a wheel install's files must also still be as pip recorded
   them (RECORD).
2. `.pth` files and `sitecustomize`/`usercustomize` modules (hashed), on every folder Python
   searches: this process's sys.path, the site folders, the user's site folder even where it
   does not exist yet (making it is a change), and the folder holding the grader's package,
   which the worker puts first.
3. Shadowing: at the top level of each of those folders, every entry that Python would import
   for a name the grader imports or for a standard-library module: a package or namespace
   folder (`numpy/`), a module (`rich.py`, `rich.pyc`, `torch.cpython-311-...so`), a link to
   one, and its compiled file in the folder's `__pycache__`.
4. The whole tree of each package the grader's processes import, wherever on those folders
   it lies: every module of the standard library, those this process imported from a site
   folder when the snapshot is taken (click, rich, whatever a `.pth` file imported at
   start-up), and JUDGE_IMPORTS, what the worker and its children import besides
   (torch and the packages it loads, numpy; tests/test_integrity.py fails when a module a
   worker loads is not covered).

Items 3 and 4 are fingerprinted by (size, mtime_ns, ctime_ns, inode), not hashed (hashing
torch takes seconds): a write in place changes ctime, which no unprivileged process can set
back, and a replacement changes the inode. Python loads none of what is skipped there: C/C++
headers, type stubs, compiled files of another optimisation level (`.opt-1.pyc`), folders named
include, test or tests; nor, anywhere, a compiled file being written (`x.pyc.<id>`, renamed to
`x.pyc` once whole, when it is checked as any other).

A compiled file (`.pyc`) that changed or appeared is accepted when it is exactly what its
source compiles to (Python writes one on a first import, or after a source changed): its code
objects are compared with a fresh compilation of the source. Any other is removed at once
(Python compiles the source again), so that it does not outlive the run that wrote it, and the
run is refused.

Not covered:

- the folder the command was started in when Python put it first on sys.path (`python -m
  grader`, `python -c`): that folder is the user's (often the workspace the code under test
  may write); the `grader` command does not put it there;
- top-level entries whose names the grader does not import (a new `evil.py` runs only if
  something imports it, which would change a covered file), other copies of the grader's
  package on sys.path than the one in use, the rest of the installed packages, the Python
  executable and shared libraries outside sys.path (libc, CUDA's driver), and what the import
  system does not read (environment variables);
- changes made by a run whose grader was killed before its after-run check (the code under
  test runs as the same user and may kill it): the next run sees only what a wheel's RECORD
  records (the package's sources), not a compiled file or a `.pth` file left behind, and a
  later process may load such a file before any check runs. Only the sandbox
  (grader.runner.sandbox, which mounts all of this read-only) closes that.

Anything else changing these files meanwhile (a `pip install` in another terminal, editing a
checkout) also refuses the run: it cannot be told apart.

A sandboxed run takes no snapshot (`check_recorded`): its code under test sees every one of
these files read-only, so it is only asked, before the run, whether the wheel's files are still
as pip recorded them (a plain run before may have written them).
"""

from __future__ import annotations

import base64
import gc
import hashlib
import importlib.machinery
import importlib.util
import marshal
import os
import site
import stat
import sys
import sysconfig
from collections.abc import Callable
from importlib import metadata
from pathlib import Path
from types import CodeType

import grader
from grader.engine.bundle import BundleError, bundled_path

DISTRIBUTION = grader.DISTRIBUTION
REINSTALL = f'pip install --force-reinstall --no-deps "{DISTRIBUTION}"'

JUDGE_IMPORTS = (
    # what the worker, its children and the CLI import besides what a CLI process has imported
    # when it takes the snapshot (tests/test_integrity.py fails when this is not enough); one
    # not installed costs nothing
    "click", "rich", "pygments", "watchfiles", "anyio",
    "numpy", "numpy.libs", "torch", "torch.libs", "torchgen", "functorch", "sympy", "mpmath",
    "typing_extensions",
    "nvidia", "triton", "sitecustomize", "usercustomize",
    # a cluster's judge runs inside Dask's worker process (grader/coach/cluster_worker.py)
    "distributed", "dask", "cloudpickle", "tornado", "msgpack", "toolz", "tlz", "tblib", "zict",
    "sortedcontainers", "psutil", "yaml", "locket", "packaging", "importlib_metadata", "zipp",
    "jinja2", "markupsafe", "colorama", "lazy_importer",
)
SKIPPED_FOLDERS = frozenset({"include", "test", "tests"})
SKIPPED_SUFFIXES = (".h", ".hpp", ".cuh", ".pyi",
                    *(f".opt-{level}.pyc" for level in (1, 2) if level != sys.flags.optimize))
IMPORTABLE_SUFFIXES = tuple(importlib.machinery.all_suffixes())
HASHED_STEMS = ("sitecustomize", "usercustomize")
PYC_BEING_WRITTEN = ".pyc."  # `x.pyc.<id>`: Python writes there, then renames to `x.pyc`


def _foreign_cache(folder: str, name: str) -> bool:
    """A file in a `__pycache__` that Python's import system never loads: one not named
    `<module>.<this interpreter's cache tag>[.opt-N].pyc` (pytest's assertion-rewritten
    `x.cpython-311-pytest-9.0.3.pyc`, another interpreter's), or one being written."""
    if PYC_BEING_WRITTEN in name:
        return True
    if os.path.basename(folder) != "__pycache__" or not name.endswith(".pyc"):
        return False
    pieces = name[:-len(".pyc")].split(".")
    tag = sys.implementation.cache_tag
    return not (len(pieces) >= 2 and pieces[-1] == tag or len(pieces) >= 3
                and pieces[-2] == tag and pieces[-1].startswith("opt-"))

Fingerprint = tuple[str | int, ...]
Snapshot = dict[str, Fingerprint]
ABSENT: Fingerprint = ("absent",)


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


def _search_path() -> list[str]:
    """The folders Python searches for the grader's modules, this process's and the worker's
    (which puts the package's folder first), real paths without repeats. The folder the
    command was started in is left out when Python put it first (see the docstring)."""
    entries = list(sys.path)
    if entries and not sys.flags.safe_path and entries[0] in ("", _current_folder()):
        entries = entries[1:]
    entries += [*_site_folders(), str(_package_dir().parent)]
    return list(dict.fromkeys(os.path.realpath(entry) for entry in entries if entry))


def _current_folder() -> str | None:
    """The folder the command runs in; None where it was deleted (a shell can stand in one)."""
    try:
        return os.getcwd()
    except FileNotFoundError:
        return None


def _site_folders() -> list[str]:
    """Where site runs `.pth` files: the site-packages of this interpreter (and of the base
    one, for a venv that sees it) and the user's, which need not exist yet."""
    folders = list(getattr(site, "getsitepackages", list)())
    if site.ENABLE_USER_SITE is not False:
        folders.append(site.getusersitepackages())
    return folders


def _installed_folders() -> tuple[str, ...]:
    """The standard library's folders and the site folders, each as given and as real path,
    ending in a separator."""
    paths = sysconfig.get_paths()
    folders = [paths[key] for key in ("stdlib", "platstdlib", "purelib", "platlib")]
    folders += _site_folders()
    return tuple(dict.fromkeys(os.path.join(variant, "") for folder in folders
                               for variant in (folder, os.path.realpath(folder))))


def _imported_names() -> set[str]:
    """The top-level modules the grader's processes import: those this process imported from
    the standard library or a site folder (not the scripts or tests of whoever runs it), and
    JUDGE_IMPORTS."""
    installed = _installed_folders()
    names = set(JUDGE_IMPORTS)
    for name, module in list(sys.modules.items()):
        where = getattr(module, "__file__", None) or next(iter(getattr(module, "__path__", ())),
                                                          None)
        if isinstance(where, str) and os.path.abspath(where).startswith(installed):
            names.add(name.partition(".")[0])
    return names


def snapshot() -> Snapshot:
    """A fingerprint of every watched file (see the docstring), by path."""
    collecting = gc.isenabled()
    gc.disable()  # some 10,000 new tuples: collections would walk every object of the process
    try:
        return _snapshot()
    finally:
        if collecting:
            gc.enable()


def _snapshot() -> Snapshot:
    found: Snapshot = {}
    imported = _imported_names()
    guarded = [str(folder) for folder in _guarded_folders()]
    # The whole standard library is watched: which of its modules a newer torch, numpy or rich
    # imports is theirs to change, and a list of them would fall behind.
    stdlib = set(sys.stdlib_module_names)
    names = imported | stdlib | {grader.__name__}
    for folder in _search_path():
        for name in sorted(_top_level(folder, names, found) & (imported | stdlib)
                           - {grader.__name__}):
            _tree(os.path.join(folder, name), found)
    for folder in guarded:
        _tree(folder, found, hashed=True)
    return found


def _top_level(folder: str, names: set[str], found: Snapshot) -> set[str]:
    """Fingerprint what of `folder`'s top level Python would import for one of `names` (which
    a module dropped here could shadow) or run at start-up; the names of its subfolders."""
    try:
        entries = list(os.scandir(folder))
    except FileNotFoundError:
        found[folder] = ABSENT
        return set()
    except NotADirectoryError:  # a zip file on sys.path
        status = os.stat(folder)
        found[folder] = ("stat", status.st_size, status.st_mtime_ns, status.st_ctime_ns,
                         status.st_ino)
        return set()
    except OSError as exc:
        found[folder] = ("unreadable", exc.errno or 0)
        return set()
    found[folder] = ("dir", os.stat(folder).st_ino)
    folders = set()
    for entry in entries:
        name = entry.name
        if _is_dir(entry):
            folders.add(name)
            if name == "__pycache__":
                _top_level_caches(entry.path, names, found)
            elif name in names:
                found[entry.path] = ("dir", entry.inode())
        elif name.endswith(".pth") or name.startswith(HASHED_STEMS):
            found[entry.path] = _hash(entry.path)
        elif name.endswith(IMPORTABLE_SUFFIXES) and name.partition(".")[0] in names:
            found[entry.path] = _stat(entry)
    return folders


def _entries(folder: str, found: Snapshot) -> list[os.DirEntry[str]]:
    """The folder's entries; none, and the folder noted as unreadable, where it cannot be
    listed (so that becoming readable, or unreadable, is a change too)."""
    try:
        return list(os.scandir(folder))
    except OSError as exc:
        found[folder] = ("unreadable", exc.errno or 0)
        return []


def _top_level_caches(folder: str, names: set[str], found: Snapshot) -> None:
    for entry in _entries(folder, found):
        name = entry.name
        if (name.partition(".")[0] in names or name.startswith(HASHED_STEMS)) \
                and not name.endswith(SKIPPED_SUFFIXES) and not _foreign_cache(folder, name):
            found[entry.path] = _stat(entry)


def _tree(root: str, found: Snapshot, hashed: bool = False) -> None:
    """Fingerprint every file under `root` (sha256 when `hashed`), skipping what Python never
    loads unless `hashed` (the grader's own files are all hashed)."""
    pending = [root]
    while pending:
        folder = pending.pop()
        for entry in _entries(folder, found):
            if entry.is_dir(follow_symlinks=False):
                if hashed or entry.name not in SKIPPED_FOLDERS:
                    pending.append(entry.path)
            elif _foreign_cache(folder, entry.name):
                continue
            elif hashed:
                found[entry.path] = _hash(entry.path)
            elif not entry.name.endswith(SKIPPED_SUFFIXES):
                found[entry.path] = _stat(entry)


def _is_dir(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_dir()
    except OSError:
        return False


def _stat(entry: os.DirEntry[str]) -> Fingerprint:
    """What changes when a file is written in place (ctime, which nobody can set back) or
    replaced (the inode), of the file a symbolic link leads to."""
    try:
        status = entry.stat()
    except OSError:  # a link leading nowhere
        status = entry.stat(follow_symlinks=False)
    return ("stat", status.st_size, status.st_mtime_ns, status.st_ctime_ns, status.st_ino)


def _hash(path: str) -> Fingerprint:
    try:
        with open(path, "rb") as file:
            return ("sha256", hashlib.sha256(file.read()).hexdigest())
    except OSError as exc:
        return ("unreadable", exc.errno or 0)


def recorded() -> dict[str, str]:
    """sha256 (hex) of each installed file inside the package folder in use, from the RECORD
    of a wheel install; empty for a source checkout or an editable install, whose package
    folder pip did not install."""
    try:
        distribution = metadata.distribution(DISTRIBUTION)
    except metadata.PackageNotFoundError:
        return {}
    base = os.path.realpath(str(distribution.locate_file("")))
    package = os.path.join(str(_package_dir()), "")
    found = {}
    for entry in distribution.files or []:
        if entry.hash is None or entry.hash.mode != "sha256":
            continue
        path = os.path.normpath(os.path.join(base, str(entry)))
        if path.startswith(package):
            padded = entry.hash.value + "=" * (-len(entry.hash.value) % 4)
            found[path] = base64.urlsafe_b64decode(padded).hex()
    return found


def installed_fingerprint() -> str:
    """sha256 over the grader's version, its package's files and the references' (by path
    inside each, compiled caches aside): equal on two machines exactly when they would grade
    alike, from a wheel or from a checkout, wherever each is installed. A cluster's worker
    compares its own with the coach's (grader/coach/cluster.py)."""
    package = _package_dir()
    try:
        references: Path | None = bundled_path("reference").resolve()
    except BundleError:
        references = None
    digest = hashlib.sha256(f"grader {grader.__version__}\0".encode())
    folders = {"grader": package, **({"reference": references} if references else {})}
    for label, folder in folders.items():
        files = sorted(path for path in folder.rglob("*") if path.is_file()
                       and "__pycache__" not in path.parts and path.suffix != ".pyc"
                       and not (label == "grader" and references
                                and path.is_relative_to(references)))
        for path in files:
            digest.update(f"{label}/{path.relative_to(folder).as_posix()}\0".encode())
            digest.update(hashlib.sha256(path.read_bytes()).digest())
    return digest.hexdigest()


def differences(expected: Snapshot, found: Snapshot) -> list[str]:
    """The paths of `expected` that are missing or different in `found`, and those added."""
    return [_difference(path, expected, found) for path in _changed_paths(expected, found)]


def _changed_paths(expected: Snapshot, found: Snapshot) -> list[str]:
    return [path for path in {**expected, **found}
            if expected.get(path, ABSENT) != found.get(path, ABSENT)]


def _difference(path: str, expected: Snapshot, found: Snapshot) -> str:
    if expected.get(path, ABSENT) == ABSENT:
        return f"{path} was added"
    return f"{path} is missing" if found.get(path, ABSENT) == ABSENT else f"{path} changed"


def check_installed() -> Snapshot:
    """The snapshot to compare with after the run; IntegrityError when a file pip installed is
    no longer as installed."""
    now = snapshot()
    _refuse_unrecorded(now.get)
    return now


def check_recorded() -> None:
    """IntegrityError when a file pip installed is no longer as installed, hashing those files
    alone: all that a sandboxed run needs checked, whose code under test sees every file the
    judge loads read-only (grader.runner.sandbox), so that nothing is to be compared after it."""
    _refuse_unrecorded(lambda path: _hash(path) if os.path.lexists(path) else None)


def _refuse_unrecorded(found: Callable[[str], Fingerprint | None]) -> None:
    """IntegrityError naming each file of the wheel's RECORD whose `found` fingerprint is not
    the recorded sha256 (None: the file is missing)."""
    changed = [f"{path} is missing" if now is None else f"{path} changed"
               for path, digest in recorded().items()
               if (now := found(path)) != ("sha256", digest)]
    if changed:
        raise IntegrityError(
            f"the installed grader is not as installed ({_listed(changed)}), so its checks "
            f"cannot be trusted; reinstall it: {REINSTALL}")


def check_unchanged(before: Snapshot) -> None:
    """IntegrityError when a file Python would load for the grader changed since `before` (the
    code under test wrote into it, or someone changed it meanwhile). A compiled file that is
    not its source's compilation is removed first."""
    after = snapshot()
    changed = [path for path in _changed_paths(before, after)
               if not (path.endswith(".pyc") and after.get(path, ABSENT) != ABSENT
                       and _compiled_from_source(path))]
    if not changed:
        return
    removed = [path for path in changed if path.endswith(".pyc") and _discard(path)]
    raise IntegrityError(
        "files Python loads for the grader changed while it ran "
        f"({_listed([_difference(path, before, after) for path in sorted(changed)])}): the "
        "code under test may have written into them, and no result of this run or a later "
        "one can be trusted until they are restored: delete what was added, and reinstall "
        f"what changed (the grader: {REINSTALL}; in a source checkout: git checkout -- grader "
        "reference; another package: pip install --force-reinstall --no-deps PACKAGE)"
        + (f"; the {len(removed)} compiled file(s) among them that were not their source's "
           "compilation were removed already (Python compiles them again)" if removed else ""))


def _compiled_from_source(path: str) -> bool:
    """Whether the compiled file at `path` holds exactly what Python would compile from its
    source (whatever its header says: a header that does not match makes Python ignore it)."""
    try:
        source = importlib.util.source_from_cache(path)
    except ValueError:  # not in a __pycache__: a module without source, loaded as it is
        return False
    tag = path.rsplit(".", 2)[1]
    level = int(tag[4:]) if tag.startswith("opt-") and tag[4:].isdigit() else 0
    try:
        with open(path, "rb") as file:
            data = file.read()
        with open(source, "rb") as file:
            expected = compile(file.read(), source, "exec", dont_inherit=True,
                               optimize=level)
        if data[:4] != importlib.util.MAGIC_NUMBER:
            return False
        found = marshal.loads(data[16:])
    except Exception:  # unreadable, no source, or not valid bytecode: not what Python writes
        return False
    return isinstance(found, CodeType) and _same_code(found, expected)


def _same_code(found: CodeType, expected: CodeType) -> bool:
    """Code objects equal in all that runs (== leaves out some of it), nested ones too; their
    file names may differ (the source's path as the writer imported it)."""
    if found != expected or _shape(found) != _shape(expected):
        return False
    inner = [(a, b) for a, b in zip(found.co_consts, expected.co_consts, strict=True)
             if isinstance(a, CodeType)]
    return all(isinstance(b, CodeType) and _same_code(a, b) for a, b in inner)


def _shape(code: CodeType) -> tuple[object, ...]:
    return (code.co_qualname, code.co_stacksize, code.co_nlocals, code.co_varnames,
            code.co_cellvars, code.co_freevars, code.co_code)


def _discard(path: str) -> bool:
    try:
        if stat.S_ISREG(os.lstat(path).st_mode):
            os.unlink(path)
            return True
    except OSError:
        pass
    return False


def _listed(lines: list[str]) -> str:
    shown = "; ".join(lines[:3])
    return shown + (f"; and {len(lines) - 3} more" if len(lines) > 3 else "")
