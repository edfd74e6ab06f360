"""Every file Python would load for the grader: refused when not as installed, and a run that
changes one fails.

Each poisoning is done for real, on a throwaway layout: a package folder the checker hashes, a
site folder holding stand-ins for torch and numpy, a folder earlier on sys.path and a user site
folder that does not exist yet (the checker's roots are patched to point there). End to end, a
hostile exercise poisons a wheel install of this checkout in a venv of its own, and a copy of
the grader on PYTHONPATH.
"""

from __future__ import annotations

import base64
import hashlib
import importlib.machinery
import importlib.util
import json
import marshal
import os
import py_compile
import shutil
import subprocess
import sys
import time
import zipfile
from collections.abc import Callable
from pathlib import Path

import pytest

import grader
from grader.engine import integrity

from helpers import REPO, SESSION_ENV, run_grader, run_owned, write_workspace

EXTENSION = importlib.machinery.EXTENSION_SUFFIXES[0]


class Layout:
    """The throwaway folders the checker watches instead of the real install."""

    def __init__(self, root: Path) -> None:
        self.early = root / "early"          # a folder on sys.path before the site folder
        self.site = root / "site"            # a site folder
        self.user = root / "user-site"       # the user's site folder, not made yet
        self.package = root / "pkg" / "fakegrader"  # the grader's package (hashed)
        self.early.mkdir()
        write(self.package / "__init__.py", "")
        write(self.package / "report.py", "VALUE = 'honest'\n")
        write(self.package / "cli.py", "def main():\n    return 0\n")
        py_compile.compile(str(self.package / "report.py"), doraise=True)
        write(self.site / "base.pth", "import os\n")
        write(self.site / "typing_extensions.py", "X = 1\n")
        write(self.site / "numpy" / "__init__.py", "from numpy.core import *\n")
        write(self.site / "numpy" / "core.py", "def allclose(a, b):\n    return a == b\n")
        py_compile.compile(str(self.site / "numpy" / "core.py"), doraise=True)
        write(self.site / "torch" / "__init__.py", "")
        (self.site / "torch" / "lib").mkdir()
        (self.site / "torch" / "lib" / "libtorch_cpu.so").write_bytes(b"\x7fELF" + bytes(64))
        write(self.site / "torch" / "include" / "ATen.h", "#pragma once\n")

    def patch(self, monkeypatch: pytest.MonkeyPatch) -> None:
        monkeypatch.setattr(integrity, "_search_path", lambda: [
            os.path.realpath(p) for p in (self.early, self.site, self.user)])
        monkeypatch.setattr(integrity, "_guarded_folders", lambda: [self.package.resolve()])
        monkeypatch.setattr(integrity, "_imported_names", lambda: {"numpy", "torch", "rich",
                                                                 "typing_extensions"})
        monkeypatch.setattr(integrity, "recorded", dict)


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


@pytest.fixture
def layout(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Layout:
    made = Layout(tmp_path)
    made.patch(monkeypatch)
    # The kernel stamps ctime from a clock that ticks every few milliseconds: a poisoning in
    # the same tick as the layout's making could keep its ctime (an attacker's comes long after
    # the install, and after the snapshot taken when the command started).
    time.sleep(0.05)
    return made


def refusal(poison: Callable[[], None]) -> str:
    """What check_unchanged says after `poison` ran between the two checks (it must refuse)."""
    before = integrity.check_installed()
    poison()
    with pytest.raises(integrity.IntegrityError) as raised:
        integrity.check_unchanged(before)
    assert integrity.REINSTALL in str(raised.value)
    return " ".join(str(raised.value).split())


def poisoned_pyc(source: Path, code: str) -> bytes:
    """A compiled file of `code` whose header carries `source`'s size and mtime, so that Python
    takes it for the compilation of `source`."""
    status = source.stat()
    header = importlib.util.MAGIC_NUMBER + (0).to_bytes(4, "little") \
        + (int(status.st_mtime) & 0xFFFFFFFF).to_bytes(4, "little") \
        + (status.st_size & 0xFFFFFFFF).to_bytes(4, "little")
    return header + marshal.dumps(compile(code, str(source), "exec"))


def cache_of(source: Path) -> Path:
    return Path(importlib.util.cache_from_source(str(source)))


def loaded_value(layout: Layout) -> str:
    """fakegrader.report.VALUE as a fresh Python process imports it."""
    done = run_owned([sys.executable, "-c", "import fakegrader.report as r; print(r.VALUE)"],
                     cwd=layout.early,
                     env={**SESSION_ENV, "PYTHONPATH": str(layout.package.parent)})
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def rewrite_keeping_times(path: Path, data: bytes) -> None:
    """Write `data` over `path` in place and set its access and modification times back."""
    status = path.stat()
    with open(path, "r+b") as file:
        file.write(data)
        file.truncate()
    os.utime(path, ns=(status.st_atime_ns, status.st_mtime_ns))


def test_an_unchanged_install_passes(layout: Layout) -> None:
    before = integrity.check_installed()
    integrity.check_unchanged(before)
    assert integrity.snapshot() == before


@pytest.mark.parametrize("where", ["package", "numpy"])
def test_a_compiled_file_rewritten_under_its_sources_header_is_refused_and_removed(
        layout: Layout, where: str) -> None:
    """The red team's attack: Python trusts the poisoned file (header as the source's), so the
    check must look at what it holds; the file is removed so the next run compiles afresh."""
    source = layout.package / "report.py" if where == "package" else \
        layout.site / "numpy" / "core.py"
    pyc = cache_of(source)
    said = refusal(lambda: rewrite_keeping_times(pyc, poisoned_pyc(source, "VALUE = 'forged'")))
    assert f"{pyc} changed" in said
    assert "the 1 compiled file(s) among them that were not their source's compilation were " \
        "removed already" in said
    assert not pyc.exists()
    if where == "package":
        assert loaded_value(layout) == "honest"


def test_the_poisoned_compiled_file_is_what_python_would_load(layout: Layout) -> None:
    """Without the check, the next process runs the forged code: the attack is real."""
    source = layout.package / "report.py"
    cache_of(source).write_bytes(poisoned_pyc(source, "VALUE = 'forged'"))
    assert loaded_value(layout) == "forged"


@pytest.mark.parametrize("where", ["package", "numpy"])
def test_a_compiled_file_added_where_none_was_is_refused(layout: Layout, where: str) -> None:
    source = layout.package / "cli.py" if where == "package" else \
        layout.site / "numpy" / "__init__.py"
    pyc = cache_of(source)
    pyc.parent.mkdir(exist_ok=True)
    assert not pyc.exists()
    said = refusal(lambda: pyc.write_bytes(poisoned_pyc(source, "def main():\n    return 1\n")))
    assert f"{pyc} was added" in said
    assert not pyc.exists()


def test_a_compiled_file_without_source_added_to_the_package_is_refused(layout: Layout) -> None:
    """Python loads `name.pyc` beside the package's modules when there is no `name.py`."""
    legacy = layout.package / "helpers.pyc"
    said = refusal(lambda: legacy.write_bytes(
        poisoned_pyc(layout.package / "cli.py", "X = 1\n")))
    assert f"{legacy} was added" in said


@pytest.mark.parametrize("where", ["package", "numpy"])
def test_a_compiled_file_python_writes_itself_is_no_alarm(layout: Layout, where: str) -> None:
    """A first import, or one after a source changed, writes what the source compiles to."""
    sources = [layout.package / "cli.py", layout.package / "report.py"] if where == "package" \
        else [layout.site / "numpy" / "__init__.py", layout.site / "numpy" / "core.py"]
    before = integrity.check_installed()
    for source in sources:  # one added, one rewritten
        cache_of(source).unlink(missing_ok=True)
        py_compile.compile(str(source), doraise=True)
    integrity.check_unchanged(before)
    assert all(cache_of(source).exists() for source in sources)


@pytest.mark.parametrize("how", ["added", "changed", "removed"])
def test_a_pth_file_added_changed_or_removed_is_refused(layout: Layout, how: str) -> None:
    """site runs each `.pth` file's import lines in every Python process at start-up. A change
    keeping size and times is caught too: `.pth` files are hashed."""
    pth = layout.site / ("zz_poison.pth" if how == "added" else "base.pth")
    poison = {"added": lambda: write(pth, "import grader_poison\n"),
              "changed": lambda: rewrite_keeping_times(pth, b"import evil\n"),
              "removed": pth.unlink}[how]
    said = refusal(poison)
    assert f"{pth} {dict(added='was added', changed='changed', removed='is missing')[how]}" \
        in said


@pytest.mark.parametrize("name", ["sitecustomize.py", "usercustomize.py",
                                  f"sitecustomize{EXTENSION}"])
def test_a_customize_module_added_is_refused(layout: Layout, name: str) -> None:
    target = layout.early / name
    said = refusal(lambda: target.write_bytes(b"import os\n"))
    assert f"{target} was added" in said


def test_a_user_site_folder_made_with_a_pth_file_is_refused(layout: Layout) -> None:
    """The user's site folder is watched before it exists: making it is the attack."""
    said = refusal(lambda: write(layout.user / "usercustomize.py", "import os\n"))
    assert f"{layout.user} was added" in said
    assert f"{layout.user / 'usercustomize.py'} was added" in said


@pytest.mark.parametrize("shadow", ["rich.py", "numpy/__init__.py", f"torch{EXTENSION}",
                                    "rich.pyc", "link"])
def test_a_module_shadowing_an_imported_one_is_refused(layout: Layout, shadow: str) -> None:
    """A module dropped in a folder earlier on sys.path than the one it shadows."""
    def poison() -> None:
        if shadow == "link":
            write(layout.early.parent / "elsewhere" / "rich" / "__init__.py", "")
            (layout.early / "rich").symlink_to(layout.early.parent / "elsewhere" / "rich")
        else:
            write(layout.early / shadow, "")

    said = refusal(poison)
    added = layout.early / ("rich" if shadow == "link" else shadow.split("/")[0])
    assert f"{added} was added" in said


def test_a_changed_source_of_the_grader_is_refused(layout: Layout) -> None:
    source = layout.package / "report.py"
    said = refusal(lambda: rewrite_keeping_times(source, b"VALUE = 'forged'\n"))
    assert f"{source} changed" in said


@pytest.mark.parametrize("how", ["size", "mtime", "same size and mtime", "replaced"])
@pytest.mark.parametrize("target", ["torch/lib/libtorch_cpu.so", "numpy/core.py",
                                    "typing_extensions.py"])
def test_a_changed_file_of_torch_or_numpy_is_refused(layout: Layout, how: str,
                                                     target: str) -> None:
    """Fingerprinted, not hashed: size, mtime, ctime (set by every write, and by nobody back)
    and the inode (a file renamed over it)."""
    path = layout.site / target
    data = path.read_bytes()

    def poison() -> None:
        if how == "size":
            path.write_bytes(data + b"\n")
        elif how == "mtime":
            os.utime(path, ns=(path.stat().st_atime_ns, path.stat().st_mtime_ns + 10**9))
        elif how == "same size and mtime":
            rewrite_keeping_times(path, bytes(reversed(data)))
        else:
            status = path.stat()
            fresh = path.with_name("fresh")
            fresh.write_bytes(data)
            os.utime(fresh, ns=(status.st_atime_ns, status.st_mtime_ns))
            fresh.replace(path)

    assert f"{path} changed" in refusal(poison)


def test_what_python_never_loads_is_not_watched(layout: Layout) -> None:
    """C headers (and type stubs, test folders) of the packages, and top-level files that
    cannot be imported, may change: only the grader's own files are all covered."""
    before = integrity.check_installed()
    write(layout.site / "torch" / "include" / "ATen.h", "#pragma twice\n")
    write(layout.site / "README.txt", "notes\n")
    write(layout.site / "numpy" / "tests" / "test_core.py", "assert True\n")
    integrity.check_unchanged(before)


@pytest.mark.parametrize("check", ["check_installed", "check_recorded"])
def test_a_file_not_as_pip_recorded_refuses_grading(layout: Layout, check: str,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """Before a plain run (which snapshots everything) and before a sandboxed one (which hashes
    the recorded files alone): a changed file and a missing one are each named."""
    source = str(layout.package.resolve() / "report.py")
    gone = str(layout.package.resolve() / "gone.py")
    monkeypatch.setattr(integrity, "recorded", lambda: {source: "0" * 64, gone: "0" * 64})
    with pytest.raises(integrity.IntegrityError) as raised:
        getattr(integrity, check)()
    assert f"{source} changed; {gone} is missing" in str(raised.value)
    assert integrity.REINSTALL in str(raised.value)


def test_a_sandboxed_run_checks_the_recorded_files_alone(layout: Layout,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """What pip recorded, as recorded, passes, and no snapshot of the rest is taken (a sandbox
    shows it read-only to the code under test: tests/test_sandbox.py)."""
    source = layout.package.resolve() / "report.py"
    digest = hashlib.sha256(source.read_bytes()).hexdigest()
    monkeypatch.setattr(integrity, "recorded", lambda: {str(source): digest})
    monkeypatch.setattr(integrity, "snapshot", lambda: pytest.fail("took a snapshot"))
    integrity.check_recorded()


def test_files_added_since_the_install_are_not_a_mismatch(layout: Layout,
                                                          monkeypatch: pytest.MonkeyPatch
                                                          ) -> None:
    """A wheel's RECORD lists what pip wrote; bytecode caches and the like come later."""
    source = layout.package.resolve() / "report.py"
    digest = hashlib.sha256(source.read_bytes()).hexdigest()
    monkeypatch.setattr(integrity, "recorded", lambda: {str(source): digest})
    assert integrity.check_installed() == integrity.snapshot()


def test_differences_name_each_changed_missing_and_added_file() -> None:
    assert integrity.differences({"a": ("x", 1), "b": ("x", 2), "c": ("x", 3)},
                                 {"a": ("x", 1), "b": ("x", 9), "d": ("x", 4)}) \
        == ["b changed", "c is missing", "d was added"]


# ---- the real thing: what the grader's processes load, a real install, end to end ---------

IMPORTED_BY_THE_JUDGE = """
import importlib, json, os, pkgutil, sys
import grader, grader.cli, grader.runner.worker, grader.runner.child
import numpy, torch, watchfiles
for module in pkgutil.walk_packages(grader.__path__, "grader."):
    if not module.name.endswith("__main__"):
        importlib.import_module(module.name)
x = torch.randn(3, 3, dtype=torch.float64, requires_grad=True)
torch.autograd.gradcheck(lambda a: (a @ a).sum(), (x,))
files = set()
for name, module in list(sys.modules.items()):
    for path in (getattr(module, "__file__", None), getattr(module, "__cached__", None)):
        if name != "__main__" and isinstance(path, str) and os.path.exists(path):
            files.add(os.path.realpath(path))
print(json.dumps(sorted(files)))
"""
WATCHED_BY_THE_CLI = """
import json, time
import grader.cli
from grader.engine import integrity
start = time.perf_counter()
before = integrity.check_installed()
integrity.check_unchanged(before)
print(json.dumps({"watched": sorted(before), "seconds": time.perf_counter() - start}))
"""


def what_the_judge_loads(tmp: pytest.TempPathFactory) -> tuple[list[str], dict[str, object]]:
    """Every module file a worker-like process loads (every grader module, torch, numpy, a
    gradcheck, which imports sympy), and what a fresh CLI process watches."""
    env = {**SESSION_ENV}
    loaded = run_owned([sys.executable, "-P", "-c", IMPORTED_BY_THE_JUDGE], cwd=REPO, env=env)
    watched = run_owned([sys.executable, "-P", "-c", WATCHED_BY_THE_CLI], cwd=REPO, env=env)
    assert loaded.returncode == 0 and watched.returncode == 0, loaded.stderr + watched.stderr
    return json.loads(loaded.stdout), json.loads(watched.stdout)


def test_every_module_the_judge_loads_is_watched(grading) -> None:  # type: ignore[no-untyped-def]
    """JUDGE_IMPORTS is complete for the packages installed here, and a plain CLI process
    raises no false alarm on the real install."""
    loaded, watched = grading.once(what_the_judge_loads)
    assert len(loaded) > 1000
    assert [path for path in loaded if path not in set(watched["watched"])] == []


def wheel_of_this_checkout(folder: Path) -> Path:
    """A wheel of this checkout as hatchling lays it out (the references as package data), so
    that pip installs it without a build backend."""
    name = f"{grader.DISTRIBUTION.replace('-', '_')}-{grader.__version__}"
    files = {}
    for source, target in ((REPO / "grader", "grader"),
                           (REPO / "reference", "grader/_bundled/reference")):
        for path in sorted(source.rglob("*")):
            if path.is_file() and "__pycache__" not in path.parts and path.suffix != ".pyc":
                files[f"{target}/{path.relative_to(source).as_posix()}"] = path.read_bytes()
    info = f"{name}.dist-info"
    files[f"{info}/METADATA"] = \
        (f"Metadata-Version: 2.1\nName: {grader.DISTRIBUTION}\n"
         f"Version: {grader.__version__}\n").encode()
    files[f"{info}/WHEEL"] = \
        b"Wheel-Version: 1.0\nGenerator: tests\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
    files[f"{info}/entry_points.txt"] = b"[console_scripts]\ngrader = grader.cli:main\n"
    record = [f"{path},sha256={record_digest(data)},{len(data)}" for path, data in files.items()]
    files[f"{info}/RECORD"] = ("\n".join([*record, f"{info}/RECORD,,"]) + "\n").encode()
    wheel = folder / f"{name}-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as archive:
        for path, data in files.items():
            archive.writestr(path, data)
    return wheel


def record_digest(data: bytes) -> str:
    return base64.urlsafe_b64encode(hashlib.sha256(data).digest()).decode().rstrip("=")


POISONER = """\
import importlib.util, marshal, pathlib, site
import grader

source = pathlib.Path(grader.__file__).parent / "render" / "report.py"
pyc = pathlib.Path(importlib.util.cache_from_source(str(source)))
status = source.stat()
pyc.parent.mkdir(exist_ok=True)
pyc.write_bytes(importlib.util.MAGIC_NUMBER + bytes(4)
                + (int(status.st_mtime) & 0xFFFFFFFF).to_bytes(4, "little")
                + (status.st_size & 0xFFFFFFFF).to_bytes(4, "little")
                + marshal.dumps(compile("raise SystemExit('poisoned')", str(source), "exec")))
pathlib.Path(site.getsitepackages()[0], "zz_poison.pth").write_text("import os\\n")


def prefix_products_out(W, P):
    raise NotImplementedError
"""


def poisoned_wheel_install(tmp: pytest.TempPathFactory) -> dict[str, object]:
    """A venv (seeing this machine's torch and numpy) with a wheel of this checkout installed
    by pip; `grader check` of a workspace whose exercise poisons a compiled file of the grader
    and drops a `.pth` file into the venv's site-packages; then, the `.pth` file deleted as the
    refusal says, `grader check` of the same workspace made honest again."""
    root = tmp.mktemp("venv")
    venv = root / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", "--without-pip",
                    str(venv)], check=True)
    python = venv / "bin" / "python"
    env = {key: value for key, value in SESSION_ENV.items()
           if key not in ("PYTHONPATH", "PYTHONDONTWRITEBYTECODE")}
    installed = run_owned([str(python), "-m", "pip", "install", "--no-deps", "--no-index",
                           "--compile", str(wheel_of_this_checkout(root))], cwd=root, env=env)
    assert installed.returncode == 0, installed.stdout + installed.stderr
    site_packages = Path(run_owned([str(python), "-c", "import site; "
                                    "print(site.getsitepackages()[0])"],
                                   cwd=root, env=env).stdout.strip())
    workspace = write_workspace(root / "ws", "numpy", start="stubs")
    exercise = workspace / "exercises" / "part1_inplace.py"
    honest = exercise.read_text()
    exercise.write_text(POISONER)
    env["COLUMNS"] = "400"
    poisoned = run_owned([str(venv / "bin" / "grader"), "check", "part1", "--no-sandbox"],
                         cwd=workspace, env=env)
    pth = site_packages / "zz_poison.pth"
    pyc = site_packages / "grader" / "render" / "__pycache__" / \
        f"report.{sys.implementation.cache_tag}.pyc"
    result = {"poisoned": poisoned, "pth": pth, "pyc": pyc, "pyc_after": pyc.exists()}
    pth.unlink(missing_ok=True)
    exercise.write_text(honest)
    result["again"] = run_owned([str(venv / "bin" / "grader"), "check", "part1", "--json",
                                 "--no-sandbox"],
                                cwd=workspace, env=env)
    return result


def test_a_poisoned_wheel_install_is_refused_and_the_poison_does_not_reach_the_next_run(
        grading) -> None:  # type: ignore[no-untyped-def]
    """The red team's plain `grader check` of a hostile workspace, on a real install: it exits
    2 naming both files; the forged compiled file is gone, so the next run (after deleting the
    `.pth` file, as told) grades the stubs as stubs, with no false alarm."""
    done = grading.once(poisoned_wheel_install)
    poisoned, said = done["poisoned"], " ".join(done["poisoned"].stderr.split())
    assert poisoned.returncode == 2, poisoned.stdout + poisoned.stderr
    assert f"{done['pyc']} changed" in said or f"{done['pyc']} was added" in said
    assert f"{done['pth']} was added" in said
    assert not done["pyc_after"]
    again = done["again"]
    assert again.returncode == 1, again.stdout + again.stderr
    assert "poisoned" not in again.stdout + again.stderr
    assert json.loads(again.stdout)["score"] == 0


def grader_rewritten_while_it_ran(tmp: pytest.TempPathFactory
                                  ) -> tuple[subprocess.CompletedProcess[str], Path]:
    """`grader check` from a copy of the grader, graded on code that appends to a file of that
    copy while it runs (run once per test process): what the command said, and the file."""
    site = tmp.mktemp("site")
    shutil.copytree(REPO / "grader", site / "grader",
                    ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(REPO / "reference", site / "reference")
    root = write_workspace(tmp.mktemp("ws") / "ws", "numpy", start="stubs")
    (root / "exercises" / "part1_inplace.py").write_text(
        "import grader, pathlib\n"
        "path = pathlib.Path(grader.__file__).parent / 'rounds' / 'prefix-products' / "
        "'round.toml'\n"
        "path.write_text(path.read_text() + '\\n# was here\\n')\n"
        "def prefix_products_out(W, P):\n    raise NotImplementedError\n")
    done = run_grader("check", "part1", "--no-sandbox", cwd=root,
                      env={"PYTHONPATH": str(site), "COLUMNS": "200"})
    return done, site / "grader" / "rounds" / "prefix-products" / "round.toml"


JOBS = (what_the_judge_loads, poisoned_wheel_install, grader_rewritten_while_it_ran)


def test_a_check_whose_code_writes_into_the_grader_fails_and_says_how_to_restore(
        grading) -> None:  # type: ignore[no-untyped-def]
    """End to end, on a copy of the grader; the command exits 2 and says so."""
    done, target = grading.once(grader_rewritten_while_it_ran)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "# was here" in target.read_text()
    assert f"files Python loads for the grader changed while it ran ({target} changed)" in \
        " ".join(done.stderr.split())
    assert "git checkout -- grader reference" in " ".join(done.stderr.split())


@pytest.mark.parametrize(("name", "foreign"), [
    (f"report.{sys.implementation.cache_tag}.pyc", False),
    (f"report.{sys.implementation.cache_tag}.opt-1.pyc", False),
    (f"conftest.{sys.implementation.cache_tag}-pytest-9.0.3.pyc", True),
    ("report.cpython-39.pyc", True),
    (f"report.{sys.implementation.cache_tag}.pyc.140234", True),
])
def test_only_what_pythons_import_system_loads_counts_in_a_pycache(name: str,
                                                                   foreign: bool) -> None:
    """pytest writes assertion-rewritten copies beside a package's compiled files while other
    processes grade: Python never loads them, so they are no change to refuse a run for."""
    from grader.engine.integrity import _foreign_cache

    assert _foreign_cache("/x/pkg/__pycache__", name) is foreign
