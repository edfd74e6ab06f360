"""The review scan: what it flags (through aliases too), what it must not flag, and where the
flags show. Scanning parses source and never runs it, so most of this needs no worker; the one
batch at the end grades part 1 of two submissions in the session's warm worker."""

from __future__ import annotations

import csv
import io
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from grader.cli import cli
from grader.review import NOT_PARSED, flags_line, rules, scan_folder, scan_source

from helpers import REPO, SOLUTIONS_DIR, LentWorker, lend_pool, matches_golden, write_workspace


def found(source: str) -> list[tuple[int, str, str]]:
    return [(f["line"], f["rule"], f["construct"])
            for f in scan_source("part1_inplace.py", source.encode())]


def test_every_rule_has_a_reason_and_something_to_match() -> None:
    ids = [rule.id for rule in rules()]
    assert len(ids) == len(set(ids)) and NOT_PARSED in ids
    for rule in rules():
        assert rule.reason and len(rule.reason) <= 60, rule.id
        matchers = rule.names + rule.attributes + rule.builtins + rule.writes + rule.strings
        assert bool(matchers) == (rule.id != NOT_PARSED), rule.id


FLAGGED = [
    ("import grader.checks", [(1, "imports-the-grader", "import grader.checks")]),
    ("from grader_reference_prefix_products_torch import part1_inplace",
     [(1, "imports-the-grader", "from grader_reference_prefix_products_torch import "
                                "part1_inplace")]),
    ("from ..reference.torch import part1_inplace as ref",
     [(1, "imports-the-grader", "from ..reference.torch import part1_inplace")]),
    ("import torch\nengine = torch._C._ImperativeEngine",
     [(2, "torch-internals", "torch._C._ImperativeEngine")]),
    ("from torch import _C", [(1, "torch-internals", "from torch import _C")]),
    ("import torch as t\nx = t.autograd.Variable._execution_engine",
     [(2, "torch-internals", "._execution_engine")]),
    ("import sys\nframe = sys._getframe(1)", [(2, "stack-frames", "sys._getframe")]),
    ("from inspect import currentframe as here\nf = here()",
     [(1, "stack-frames", "from inspect import currentframe"),
      (2, "stack-frames", "inspect.currentframe")]),
    ("def peek(frame):\n    return frame.f_back.f_globals['truth']",
     [(2, "stack-frames", ".f_globals")]),
    ("PATH = '/proc/%d/fd' % 1", [(1, "proc", "the string '/proc/%d/fd'")]),
    ("import os as o\no.fork()", [(2, "processes", "os.fork")]),
    ("from os import fork\nfork()", [(1, "processes", "from os import fork"),
                                     (2, "processes", "os.fork")]),
    ("import os\ngetattr(os, 'execv')('/bin/sh', [])", [(2, "processes", "os.execv")]),
    ("import os\nshell = os\nshell.system('id')", [(3, "processes", "os.system")]),
    ("import sys\nsys.modules['os'].kill(1, 9)", [(2, "loaded-modules", "sys.modules"),
                                                   (2, "processes", "os.kill")]),
    ("from os import *\nsetsid()", [(2, "processes", "os.setsid")]),
    ("import subprocess as sp", [(1, "processes", "import subprocess")]),
    ("from multiprocessing import Pool", [(1, "processes", "from multiprocessing import Pool")]),
    ("import ctypes", [(1, "native-code", "import ctypes")]),
    ("import socket", [(1, "sockets", "import socket")]),
    ("import importlib\nm = importlib.import_module('grader.checks')",
     [(1, "dynamic-code", "import importlib"), (2, "dynamic-code", "importlib.import_module"),
      (2, "imports-the-grader", "import of 'grader.checks' by its name")]),
    ("fork = getattr(__import__('os'), 'fork')",
     [(1, "dynamic-code", "__import__"), (1, "processes", "os.fork")]),
    ("exec('x = 1')\ny = eval('2')\nz = compile('3', 'f', 'eval')",
     [(1, "dynamic-code", "exec"), (2, "dynamic-code", "eval"), (3, "dynamic-code", "compile")]),
    ("import builtins\nbuiltins.print = len", [(2, "builtins", "sets builtins.print")]),
    ("import builtins as b\nsetattr(b, 'open', None)", [(2, "builtins", "sets builtins.open")]),
    ("__builtins__['len'] = lambda x: 0", [(1, "builtins", "__builtins__")]),
    ("import signal\nsignal.alarm(0)", [(1, "signals-and-limits", "import signal"),
                                        (2, "signals-and-limits", "signal.alarm")]),
    ("import resource", [(1, "signals-and-limits", "import resource")]),
    ("import gc\nobjects = gc.get_objects()", [(2, "heap-search", "gc.get_objects")]),
]


@pytest.mark.parametrize(("source", "flags"), FLAGGED)
def test_each_construct_is_flagged_where_it_is_used(source: str,
                                                    flags: list[tuple[int, str, str]]) -> None:
    assert found(source) == flags


UNUSUAL_BUT_CORRECT = [
    "from __future__ import annotations\nimport numpy as np\nimport torch.nn.functional as F",
    "import typing\nimport math\nimport functools\nimport itertools\nfrom typing import Any",
    "import torch\n\nclass MatMul(torch.autograd.Function):\n    @staticmethod\n"
    "    def forward(ctx, a, b):\n        ctx.save_for_backward(a, b)\n        return a @ b\n",
    'EXPLANATION = """Writing P[i] in place breaks autograd; no subprocess, exec or eval, no\n'
    'frame walking (f_back), no torch._C and no ctypes would help: they are just words."""',
    "import re\npattern = re.compile(r'\\d+')\n",
    "def train(model, eval=False, compile=None):\n    model.eval()\n    return compile",
    "import torch\nf = torch.compile\nwith torch.no_grad():\n    pass",
    "import gc\ngc.collect()\nimport os\nname = os.path.join('a', 'b')\nimport sys\nsys.stderr",
    "import inspect\nsignature = inspect.signature(len)",
    "from exercises.part1_inplace import prefix_products_out\nfrom . import part2_out_of_place",
    "x = {'subprocess': 1, 'socket': 2}\ny = getattr(x, 'get')\nshape = getattr(x, 'shape', None)",
    "def exec_step(step):\n    return step.f_backward\n",
    "from os import *\nresult = len([1]) + abs(-1)",
]


@pytest.mark.parametrize("source", UNUSUAL_BUT_CORRECT)
def test_correct_code_written_in_unusual_ways_is_not_flagged(source: str) -> None:
    assert found(source) == []


def test_only_hostile_solutions_and_those_hiding_work_from_the_counter_are_flagged() -> None:
    files = [*(REPO / "reference").rglob("*.py"), *(REPO / "exercises").rglob("*.py"),
             *(REPO / "grader" / "rounds").glob("*/stubs/*/*.py"), *SOLUTIONS_DIR.rglob("*.py")]
    assert len(files) > 200
    flagged = {(str(path.relative_to(REPO)), f["line"], f["rule"])
               for path in files for f in scan_source(path.name, path.read_bytes())}
    known = "tests/solutions/prefix-products/"
    hostile = f"{known}hostile_"
    assert flagged == {
        (f"{known}part3_closed_form_no_torch_function/part3_backward.py", 13, "torch-internals"),
        (f"{known}part3_closed_form_spellings/torch/part3_backward.py", 14, "torch-internals"),
        (f"{hostile}segfault/part2_out_of_place.py", 4, "signals-and-limits"),
        (f"{hostile}segfault/part2_out_of_place.py", 8, "processes"),
        (f"{hostile}segfault/part2_out_of_place.py", 8, "signals-and-limits"),
        (f"{hostile}syntax_error/part1_inplace.py", 6, NOT_PARSED),
    }


@pytest.mark.parametrize(("source", "construct"), [
    (b"def broken(:\n", "SyntaxError: invalid syntax"),
    (b"x = 1\0\n", "SyntaxError: source code string cannot contain null bytes"),
    (b"x = " + b"(" * 300 + b")" * 300, "SyntaxError: too many nested parentheses"),
    (b"x = a" + b".b" * 200_000,
     "RecursionError: maximum recursion depth exceeded during ast construction"),
    (b"\xff\xfe not text", "SyntaxError: (unicode error) 'utf-8' codec can't decode byte 0xff "
                           "in position 0: invalid start byte"),
], ids=["syntax", "nul", "parentheses", "attribute-chain", "not-utf-8"])
def test_a_file_that_does_not_parse_is_a_flag_itself(source: bytes, construct: str) -> None:
    [flag] = scan_source("part1_inplace.py", source)
    assert (flag["rule"], flag["construct"]) == (NOT_PARSED, construct)


def test_a_folder_is_scanned_file_by_file_and_links_are_not_read(tmp_path: Path) -> None:
    (tmp_path / "helpers").mkdir()
    (tmp_path / "helpers" / "spy.py").write_text("import ctypes\n")
    (tmp_path / "part1_inplace.py").write_text("from helpers.spy import ctypes\n")
    (tmp_path / "notes.txt").write_text("import ctypes\n")
    (tmp_path / "linked.py").symlink_to(tmp_path / "helpers" / "spy.py")
    assert [(f["file"], f["line"], f["construct"]) for f in scan_folder(tmp_path)] == [
        ("helpers/spy.py", 1, "import ctypes")]


def test_the_line_shown_lists_the_first_flags_and_counts_the_rest() -> None:
    flags = scan_source("p.py", b"import os\n" + b"os.fork()\n" * 7)
    assert flags_line(flags) == (
        "flagged for review: " + "; ".join(f"p.py:{n} os.fork: starts or signals processes"
                                           for n in range(2, 7)) + " (+2 more)")
    assert flags_line(flags, None).count("os.fork") == 7


# --- the flags in `grade`'s table, JSON and CSV --------------------------------------------

SPY = '''
import os as _os
_probe = _os.fork  # never called: the scan reads code, it does not run it
'''


@pytest.fixture(scope="module")
def flagged_batch(grading, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """Part 1 of a correct submission with a line no solution needs, and of a correct one
    written plainly, graded as a coach would: `grade` run from the class's folder."""
    root = tmp_path_factory.mktemp("review")
    spy = write_workspace(root / "subs" / "spy", "torch") / "exercises" / "part1_inplace.py"
    spy.write_text(spy.read_text() + SPY)
    write_workspace(root / "subs" / "plain", "torch")
    (root / "grader.toml").write_text('flavor = "torch"\nparts = ["part1"]\ntimeout = 30\n')
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(root)
        lend_pool(patch, lambda: LentWorker(grading.worker), jobs=1)
        table = CliRunner().invoke(cli, ["grade", "subs", "--config", "grader.toml", "--seed",
                                         "7", "--csv", "grades.csv"], env={"COLUMNS": "120"})
    assert table.exit_code == 0, table.output
    line = len(spy.read_text().splitlines())
    return {"table": table.stdout, "csv": (root / "grades.csv").read_text(), "line": line}


def test_the_table_says_what_was_flagged_and_the_score_stands(
        flagged_batch: dict[str, Any]) -> None:
    """(The JSON's flags are pinned in test_grade, the cohort report's in test_cohort_report,
    on their batches.)"""
    assert matches_golden("grade-flagged-120.txt", flagged_batch["table"])


def test_the_csv_has_a_flags_column(flagged_batch: dict[str, Any]) -> None:
    lines = {Path(line["path"]).name: line
             for line in csv.DictReader(io.StringIO(flagged_batch["csv"]))}
    assert lines["spy"]["flags"] == \
        f"part1_inplace.py:{flagged_batch['line']} os.fork: starts or signals processes"
    assert lines["plain"]["flags"] == "" and lines["spy"]["score"] == "20"
