"""The lines where a file stands apart from a working solution (grader/checks/apart.py): found
for a file that is the reference with a line or two changed, added or left out, in the
file's own names; nothing for a file written another way, or the same."""

from __future__ import annotations

import ast

import pytest

from grader.checks import apart, mutants
from grader.checks.apart import Apart, describe, lines_apart, same_code, with_lines_apart

REFERENCE = '''"""The reference."""
import numpy as np


def running(x, weights):
    """Docstring of the reference."""
    if x.ndim != 2 or weights.ndim != 1:
        raise ValueError("bad shapes")
    total = np.zeros(x.shape[1], dtype=x.dtype)
    out = np.empty_like(x)
    for i in range(x.shape[0]):
        total = total * weights[i] + x[i]
        out[i] = total
    return out
'''


def changed(old: str, new: str, source: str = REFERENCE) -> str:
    assert source.count(old) == 1
    return source.replace(old, new)


def test_one_changed_statement_is_shown_beside_the_references() -> None:
    mine = changed("x.ndim != 2 or weights", "x.ndim != 2 and weights")
    assert lines_apart(mine, REFERENCE) == (Apart(
        "if x.ndim != 2 and weights.ndim != 1:", "if x.ndim != 2 or weights.ndim != 1:"),)


def test_the_references_line_is_shown_in_the_files_own_names() -> None:
    mine = (REFERENCE.replace("total", "acc").replace("out", "result")
            .replace("weights", "w").replace("(x", "(values").replace("x.", "values.")
            .replace("x[i]", "values[i]"))
    mine = changed("acc * w[i] + values[i]", "acc * w[i - 1] + values[i]", mine)
    (place,) = lines_apart(mine, REFERENCE)
    assert place == Apart("acc = acc * w[i - 1] + values[i]", "acc = acc * w[i] + values[i]")


def test_a_variable_read_in_one_place_for_another_is_found_though_the_shapes_agree() -> None:
    mine = changed("out[i] = total", "out[i] = weights")
    assert lines_apart(mine, REFERENCE) == (Apart("out[i] = weights", "out[i] = total"),)


def test_a_statement_left_out_and_one_added_are_shown_where_they_belong() -> None:
    left_out = changed("        out[i] = total\n", "")
    assert lines_apart(left_out, REFERENCE) == (
        Apart(None, "out[i] = total", "total = total * weights[i] + x[i]"),)
    added = changed("        out[i] = total\n",
                    "        out[i] = total\n        total = 0 * total\n")
    assert lines_apart(added, REFERENCE) == (Apart("total = 0 * total", None),)


def test_a_name_the_file_only_reads_is_no_name_of_its_own() -> None:
    """A builtin or a module read for another is a difference, however consistently."""
    mine = changed("range(x.shape[0])", "reversed(x.shape[0])")
    assert lines_apart(mine, REFERENCE) == (Apart("for i in reversed(x.shape[0]):",
                                                  "for i in range(x.shape[0]):"),)


def test_a_part_not_written_yet_shows_nothing() -> None:
    """The stub's line beside the reference's would be the answer, not a slip."""
    stub = changed("    return out\n", "    raise NotImplementedError('write running')\n")
    assert lines_apart(stub, REFERENCE) == ()


SHORT = '''"""Part 2: the stack."""
import numpy as np

from .part1 import fill


def stacked(W):
    """Every product, stacked."""
    return fill(W, np.empty_like(W))
'''


def test_a_function_too_short_to_line_up_gives_nothing_away() -> None:
    """A one-line function written otherwise (or not at all: a docstring, `pass`, another
    raise, a parameter renamed) is no slip in written code: its line beside the reference's
    would be the answer (red team 10)."""
    for body in ("    return W\n", "    pass\n", "", "    raise RuntimeError('todo')\n"):
        mine = SHORT.replace("    return fill(W, np.empty_like(W))\n", body)
        assert lines_apart(mine, SHORT) == (), body
    renamed = SHORT.replace("def stacked(W):", "def stacked(Q):").replace(
        "    return fill(W, np.empty_like(W))\n", "    return Q\n")
    assert lines_apart(renamed, SHORT) == ()


def test_a_file_built_to_be_costly_to_line_up_is_declined_unread(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Deep nesting and tens of thousands of statements on one line (red team 10 took the
    grader from 4 s to 109 s with one): past MOST_STATEMENTS none is read, and a compound
    statement's header is written without its blocks."""
    read: list[str] = []
    original = apart._statement
    monkeypatch.setattr(apart, "_statement",
                        lambda node, owner: read.append(owner) or original(node, owner))
    nested = "".join("    " * depth + "if 0:\n" for depth in range(99))
    costly = REFERENCE + nested + "    " * 99 + "y = a + b; " * 20000 + "\n"
    assert lines_apart(costly, REFERENCE) == ()
    assert len(read) <= mutants.MOST_STATEMENTS
    deep = ast.parse(nested + "    " * 99 + "y = a + b\n").body[0]
    assert mutants.statement_head(deep) == "if 0:"


def test_the_files_a_file_imports_from_its_folder() -> None:
    assert apart.imported_files(SHORT) == ("part1.py",)
    assert apart.imported_files("from exercises.part2 import g\nimport exercises.part3\n"
                                "from numpy import eye\nimport os.path\n") == (
        "part2.py", "part3.py")
    assert apart.imported_files("def (:") == ()


def test_the_same_code_names_aside() -> None:
    renamed = REFERENCE.replace("total", "acc")
    assert same_code(renamed, REFERENCE) and same_code(REFERENCE, REFERENCE)
    assert not same_code(changed("x[i]", "x[i - 1]"), REFERENCE)


def test_two_places_are_shown_and_three_are_another_way_of_writing_it() -> None:
    two = changed("range(x.shape[0])", "range(x.shape[0] - 1)",
                  changed("x.shape[1], dtype", "x.shape[0], dtype"))
    assert len(lines_apart(two, REFERENCE)) == 2
    three = changed("return out", "return out.copy()", two)
    assert lines_apart(three, REFERENCE) == ()


def test_nothing_for_the_same_file_or_a_file_written_another_way() -> None:
    assert lines_apart(REFERENCE, REFERENCE) == ()
    other = '''import numpy as np

def running(x, weights):
    if x.ndim != 2 or weights.ndim != 1:
        raise ValueError("bad shapes")
    rows = []
    acc = 0
    for row, w in zip(x, weights):
        acc = acc * w + row
        rows.append(acc)
    return np.stack(rows)
'''
    assert lines_apart(other, REFERENCE) == ()
    assert lines_apart("def running(:\n", REFERENCE) == ()


def test_docstrings_imports_and_parameter_names_are_no_difference() -> None:
    mine = (REFERENCE.replace('"""Docstring of the reference."""', '"""My own words."""')
            .replace("import numpy as np\n", "import math\nimport numpy as np\n")
            .replace("def running(x, weights):", "def running(x, gates):")
            .replace("weights.ndim", "gates.ndim").replace("weights[i]", "gates[i]"))
    assert lines_apart(mine, REFERENCE) == ()
    slipped = changed("gates[i] + x[i]", "gates[i] - x[i]", mine)
    assert lines_apart(slipped, REFERENCE) == (
        Apart("total = total * gates[i] - x[i]", "total = total * gates[i] + x[i]"),)


def test_the_sentence_and_a_hint_that_already_quotes_the_line() -> None:
    place = Apart("out[i] = weights", "out[i] = total")
    said = describe("part1.py", [place])
    assert said == ("Your part1.py differs from a working solution at one line (names aside): "
                    "`out[i] = weights` where that solution has `out[i] = total`.")
    assert with_lines_apart("Fix the loop.", "part1.py", [place]) == f"Fix the loop. {said}"
    quoted = "Your out is what you get reading the wrong variable: `out[i] = weights` ..."
    assert with_lines_apart(quoted, "part1.py", [place]) == quoted
    assert with_lines_apart(None, "part1.py", []) is None
    recipe = "Write each row: out[i] = total, after the sum."
    assert with_lines_apart(recipe, "part1.py", [place]) == f"{recipe} {said}"
    two = describe("p.py", [Apart("a = 1", None), Apart(None, "b = 2", "c = 3")])
    assert two == ("Your p.py differs from a working solution at 2 lines (names aside): "
                   "`a = 1`, which that solution does not have; that solution also has "
                   "`b = 2` after `c = 3`.")
