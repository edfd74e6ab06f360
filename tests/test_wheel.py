"""The wheel is the product: build the sdist and the wheel from this checkout, install the wheel
in a fresh venv that cannot see the checkout, and use it there as a candidate and a coach would
(`grader rounds`, `grader init` of every round, `grader selfcheck`, one `grader check`), so
package data (stubs, references, tables, topics, templates) cannot go missing unnoticed. The
metadata is checked as a registry page would show it.

The venv is made without pip and without the system's site-packages: the wheel goes in with the
outer pip (--no-deps), and only then does a .pth file lend it the already installed
dependencies (torch is large). Paths a .pth names are not scanned for .pth files, so the
editable install of the checkout stays invisible there; the test asserts grader is imported from
the venv."""

from __future__ import annotations

import email.parser
import importlib.util
import json
import os
import shutil
import site
import subprocess
import sys
import tarfile
import tomllib
import zipfile
from dataclasses import dataclass
from pathlib import Path

import pytest
from conftest import Grading

from grader.engine.rounds import installed
from grader.engine.workspace import pristine_files

from helpers import PREFIX, REPO, run_owned

pytestmark = [pytest.mark.skipif(importlib.util.find_spec("build") is None,
                                 reason="needs `build` (the test extra)"),
              pytest.mark.slow]  # a wheel and an sdist built, installed in a venv of their own

PROJECT = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
SHIPPED = ("grader", "reference")
"""The checkout's folders whose every file the sdist must hold (the wheel: grader/, and
reference/ as grader/_bundled/reference/)."""
SKIPPED = ("__pycache__", ".pyc", ".mypy_cache", ".ruff_cache")


@dataclass(frozen=True)
class Installed:
    """The built files and the venv the wheel went into."""

    sdist: Path
    wheel: Path
    venv: Path
    home: Path

    def grader(self, *args: str | Path, cwd: Path | None = None
               ) -> subprocess.CompletedProcess[str]:
        """The installed console script, outside the checkout, with no PYTHONPATH and no
        coach's settings from this environment."""
        env = {k: v for k, v in os.environ.items()
               if k != "PYTHONPATH" and not k.startswith("GRADER_")}
        return run_owned([str(self.venv / "bin" / "grader"), *map(str, args)],
                         cwd=cwd or self.home, env={**env, "NO_COLOR": "1", "COLUMNS": "200"})


def built_and_installed(tmp: pytest.TempPathFactory) -> Installed:
    home = tmp.mktemp("wheel")
    dist = home / "dist"
    # Without hatchling here, build fetches it into an isolated environment (from PyPI).
    isolation = [] if importlib.util.find_spec("hatchling") is None else ["--no-isolation"]
    made = run_owned([sys.executable, "-m", "build", *isolation, "--outdir", str(dist),
                      str(REPO)], cwd=home, env=dict(os.environ), timeout=600)
    assert made.returncode == 0, made.stderr[-3000:]
    (sdist,) = dist.glob("*.tar.gz")
    (wheel,) = dist.glob("*.whl")
    venv = home / "venv"
    run_owned([sys.executable, "-m", "venv", "--without-pip", str(venv)], cwd=home,
              env=dict(os.environ)).check_returncode()
    python = venv / "bin" / "python"
    put = run_owned([sys.executable, "-m", "pip", "--python", str(python), "install", "-q",
                     "--no-deps", str(wheel)], cwd=home, env=dict(os.environ))
    assert put.returncode == 0, put.stderr
    (purelib,) = (venv / "lib").glob("python3*/site-packages")
    (purelib / "zz_dependencies.pth").write_text("\n".join(site.getsitepackages()) + "\n")
    return Installed(sdist, wheel, venv, home)


JOBS = (built_and_installed,)


@pytest.fixture
def product(grading: Grading) -> Installed:
    done = grading.once(built_and_installed)
    assert isinstance(done, Installed)
    return done


def _checkout_files(folder: str) -> list[str]:
    return sorted(p.relative_to(REPO).as_posix() for p in (REPO / folder).rglob("*")
                  if p.is_file() and not any(s in p.as_posix() for s in SKIPPED))


def test_the_venv_imports_the_wheel_not_the_checkout(product: Installed) -> None:
    shown = run_owned([str(product.venv / "bin" / "python"), "-c",
                       "import grader; print(grader.__file__)"], cwd=product.home,
                      env={k: v for k, v in os.environ.items() if k != "PYTHONPATH"})
    assert Path(shown.stdout.strip()).is_relative_to(product.venv), shown.stdout


def test_sdist_holds_every_shipped_file(product: Installed) -> None:
    with tarfile.open(product.sdist) as sdist:
        names = {n.split("/", 1)[1] for n in sdist.getnames() if "/" in n}
    wanted = [f for folder in SHIPPED for f in _checkout_files(folder)]
    assert wanted and [f for f in wanted if f not in names] == []
    for top in ("LICENSE", "README.md", "pyproject.toml", "docs/notebook.md", "tests/helpers.py"):
        assert top in names


def test_wheel_holds_the_package_and_the_references(product: Installed) -> None:
    with zipfile.ZipFile(product.wheel) as wheel:
        names = set(wheel.namelist())
    wanted = _checkout_files("grader") + [
        f"grader/_bundled/{f}" for f in _checkout_files("reference")]
    assert [f for f in wanted if f not in names] == []
    assert {"grader/jupyter.py", "grader/candidate/notebook.py"} <= names


def test_metadata_is_what_a_registry_page_shows(product: Installed) -> None:
    with zipfile.ZipFile(product.wheel) as wheel:
        (meta,) = [n for n in wheel.namelist() if n.endswith(".dist-info/METADATA")]
        metadata = email.parser.Parser().parsestr(wheel.read(meta).decode())
        (license_file,) = [n for n in wheel.namelist() if n.endswith(".dist-info/licenses/LICENSE")]
        license_text = wheel.read(license_file).decode()
    assert metadata["Name"] == PROJECT["name"] == "ml-interview-grader"
    assert metadata["Summary"] == PROJECT["description"]
    assert metadata["License"] == "MIT"
    assert license_text.startswith("MIT License\n\nCopyright (c) the grader authors\n")
    assert metadata.get_all("Classifier") == sorted(PROJECT["classifiers"])
    assert "Framework :: Jupyter" in PROJECT["classifiers"]
    assert sorted(metadata.get_all("Provides-Extra")) == ["cluster", "notebook", "report", "test"]
    assert metadata["Requires-Python"] == ">=3.11"
    assert metadata.get_payload().startswith("# ")  # README.md is the long description
    assert metadata.get_all("Project-URL") is None  # the project has no public address yet


def test_installed_grader_lists_every_round(product: Installed) -> None:
    shown = product.grader("rounds")
    assert shown.returncode == 0, shown.stderr
    for round_id in installed():
        assert f"│ {round_id} " in shown.stdout


@pytest.mark.parametrize("round_id", sorted(installed()))
def test_installed_grader_inits_every_round(product: Installed, round_id: str) -> None:
    round_ = installed()[round_id]
    folder = product.home / f"ws-{round_id}"
    made = product.grader("init", folder, "--round", round_id, "--notebook")
    assert made.returncode == 0, made.stderr
    written = {p.relative_to(folder / "exercises").as_posix(): p.read_text()
               for p in (folder / "exercises").rglob("*") if p.is_file()}
    assert written == pristine_files(round_, round_.default_flavor)
    assert (folder / f"{round_id}.ipynb").is_file()


def test_installed_selfcheck_passes(product: Installed) -> None:
    shown = product.grader("selfcheck", "--seed", "20240")
    assert shown.returncode == 0, shown.stdout[-3000:] + shown.stderr
    assert "selfcheck passed" in shown.stdout


def test_installed_check_grades_the_bundled_reference(product: Installed) -> None:
    folder = product.home / "ws-check"
    assert product.grader("init", folder, "--flavor", "numpy").returncode == 0
    part = PREFIX.part("part1")
    (bundled,) = product.venv.glob(
        f"lib/python3*/site-packages/grader/_bundled/reference/{PREFIX.id}/numpy/{part.file}")
    shutil.copy(bundled, folder / "exercises" / part.file)
    shown = product.grader("check", "part1", "--json", "--seed", "20240", cwd=folder)
    assert shown.returncode == 0, shown.stdout + shown.stderr
    doc = json.loads(shown.stdout)
    assert doc["score"] == doc["max_score"] == pytest.approx(part.weight)


def test_an_install_without_its_references_says_so_in_one_line(product: Installed) -> None:
    """A wheel that lost its references (the force-include gone) fails with one clear line, not
    a traceback: the installed package is copied without _bundled/ and run from there."""
    (site_packages,) = product.venv.glob("lib/python3*/site-packages")
    broken = product.home / "broken"
    shutil.copytree(site_packages / "grader", broken / "grader",
                    ignore=shutil.ignore_patterns("_bundled"))
    folder = product.home / "ws-broken"
    assert product.grader("init", folder, "--round", "matmul-grad").returncode == 0
    env = {k: v for k, v in os.environ.items() if not k.startswith("GRADER_")}
    done = run_owned([str(product.venv / "bin" / "python"), "-m", "grader", "solution", "part1",
                      "--force"], cwd=folder, env={**env, "PYTHONPATH": str(broken)})
    assert done.returncode == 1, done.stdout + done.stderr
    assert done.stderr == ("Error: grader is installed without its reference/ folder; "
                           "reinstall it\n")
