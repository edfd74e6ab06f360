"""Rounds use the engine through grader.round_api only: the judge side (checks.py and its
helpers) through round_api.judge, probes.py (in the candidate's process) through
round_api.probes, which itself loads none of the judge's modules."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

import grader
from grader.engine.rounds import ROUNDS_DIR
from grader.runner.sandbox import CANDIDATE_SIDE

from helpers import REPO

ROUND_FILES = sorted(p for p in ROUNDS_DIR.glob("*/*.py"))


def grader_imports(path: Path) -> list[str]:
    """The grader modules a file imports, anywhere in it (inside functions too)."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.append(node.module)
        elif isinstance(node, ast.Import):
            found += [alias.name for alias in node.names]
    return [name for name in found if name == "grader" or name.startswith("grader.")]


@pytest.mark.parametrize("path", ROUND_FILES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_a_round_imports_the_engine_through_its_sides_api_only(path: Path) -> None:
    side = "grader.round_api.probes" if path.name == "probes.py" else "grader.round_api.judge"
    assert [m for m in grader_imports(path) if m != side] == []


def test_the_rounds_were_found() -> None:
    assert len({p.parent for p in ROUND_FILES}) >= 5 and len(ROUND_FILES) >= 10


def test_a_private_import_is_caught(tmp_path: Path) -> None:
    sneaky = tmp_path / "checks.py"
    sneaky.write_text("def f():\n    from grader.checks.kinds import KINDS\n"
                      "    import grader.runner\n")
    assert grader_imports(sneaky) == ["grader.checks.kinds", "grader.runner"]


def test_the_probes_api_loads_only_what_a_sandbox_shows() -> None:
    """Every grader module that importing it, the sandbox's executor and every round's
    probes.py loads is among the files a sandbox shows (CANDIDATE_SIDE): in a sandbox nothing
    else can be imported."""
    script = ("import sys\nimport grader.runner.executor\n"
              "from grader.engine.rounds import installed, load_module\n"
              "for r in installed().values(): load_module(r, 'probes')\n"
              "print(' '.join(m.__file__ for n, m in sys.modules.items() "
              "if n.startswith('grader.') and getattr(m, '__file__', None)))")
    loaded = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                            check=True, cwd=REPO).stdout.split()
    package = Path(grader.__file__).resolve().parent
    shown = {p.resolve() for pattern in CANDIDATE_SIDE for p in package.glob(pattern)}
    engine = [Path(f).resolve() for f in loaded if Path(f).resolve().is_relative_to(package)
              and not Path(f).resolve().is_relative_to(ROUNDS_DIR / "")
              or Path(f).resolve() == ROUNDS_DIR / "__init__.py"]
    assert len(engine) > 5
    assert sorted(str(p.relative_to(package)) for p in engine if p not in shown) == []


def test_mismatched_shapes_breaks_each_shared_size_alone_and_each_rank() -> None:
    from grader.round_api.judge import mismatched_shapes

    found = mismatched_shapes({"X": "BD", "W": "DH", "b": "H"}, {"B": 2, "D": 3, "H": 4})
    assert found == [
        ("X is (2, 4): its D is 4, the others' 3", {"X": (2, 4), "W": (3, 4), "b": (4,)}),
        ("X has ndim 1", {"X": (3,), "W": (3, 4), "b": (4,)}),
        ("X has ndim 3", {"X": (2, 2, 3), "W": (3, 4), "b": (4,)}),
        ("W is (4, 4): its D is 4, the others' 3", {"X": (2, 3), "W": (4, 4), "b": (4,)}),
        ("W is (3, 5): its H is 5, the others' 4", {"X": (2, 3), "W": (3, 5), "b": (4,)}),
        ("W has ndim 1", {"X": (2, 3), "W": (4,), "b": (4,)}),
        ("W has ndim 3", {"X": (2, 3), "W": (2, 3, 4), "b": (4,)}),
        ("b is (5,): its H is 5, the others' 4", {"X": (2, 3), "W": (3, 4), "b": (5,)}),
        ("b has ndim 0", {"X": (2, 3), "W": (3, 4), "b": ()}),
        ("b has ndim 2", {"X": (2, 3), "W": (3, 4), "b": (2, 4)}),
    ]
    # B is X's alone: a batch of another size is still valid, so it is never changed.
    assert not any("its B" in label for label, _ in found)
    # Only the arguments whose rank the contract fixes get a rank changed (x may be batched).
    assert [label for label, _ in mismatched_shapes({"x": "BD", "gamma": "D"},
                                                    {"B": 2, "D": 3}, ranks=["gamma"])] == [
        "x is (2, 4): its D is 4, the others' 3", "gamma is (4,): its D is 4, the others' 3",
        "gamma has ndim 0", "gamma has ndim 2"]
