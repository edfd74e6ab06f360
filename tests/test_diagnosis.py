"""Differential diagnosis (grader/checks/mutants.py) and symptoms (grader/checks/symptoms.py).

The end-to-end proof is in tests/solutions: mistakes no hand-written simulator lists, named by
the reference's mutants or described by what holds of them. Here: every round's reference
makes mutants that load and that each template can name; a match needs the mutant's values
and not merely zeros; what `describe` and `where_wrong` say, word for word.
"""

from __future__ import annotations

import pickle
import sys
from collections.abc import Callable
from types import CodeType, ModuleType, SimpleNamespace
from typing import Any

import numpy as np
import pytest

from grader.checks import mutants, symptoms
from grader.checks.cases import Case
from grader.engine.rounds import get_round, installed
from grader.probes.library import OUT_OF_TIME, Statements

REFERENCE_PARTS = [pytest.param(round_, flavor, part, id=f"{round_.id}/{flavor}/{part.id}")
                   for round_ in installed().values() for flavor in round_.flavors
                   for part in round_.parts_for(flavor)]


@pytest.mark.parametrize(("round_", "flavor", "part"), REFERENCE_PARTS)
def test_every_reference_part_makes_mutants_that_compile_and_can_be_named(round_, flavor,
                                                                           part) -> None:
    source = (round_.reference_dir(flavor) / part.file).read_text()
    made = mutants.mutants(source)
    original = compile(source, part.file, "exec")
    assert len(made) <= mutants.MAX_MUTANTS
    assert len({m.source for m in made}) == len(made)
    for mutant in made:
        code = compile(mutant.source, part.file, "exec")
        assert not same_code(code, original), mutant.after
        assert mutant.before and (mutant.after or mutant.operator == "drop_step")
        assert mutants.describe(mutant, "the result").startswith("Your result is what")


def same_code(a: object, b: object) -> bool:
    """Two compiled modules alike in what they run (bytecode, constants, names; line numbers
    aside), compared up to the first difference: a slip that compiles to the reference's own
    code is no slip. Compiled from the text, which is quicker than building each of a thousand
    mutants' trees in Python."""
    if isinstance(a, CodeType) and isinstance(b, CodeType):
        return (a.co_code, a.co_names, a.co_varnames, a.co_freevars, a.co_cellvars) == (
            b.co_code, b.co_names, b.co_varnames, b.co_freevars, b.co_cellvars) \
            and same_code(a.co_consts, b.co_consts)
    if isinstance(a, tuple) and isinstance(b, tuple):
        return len(a) == len(b) and all(same_code(x, y) for x, y in zip(a, b, strict=True))
    return type(a) is type(b) and a == b


@pytest.mark.parametrize(("round_", "flavor", "part"), REFERENCE_PARTS)
def test_a_mutant_loaded_statement_by_statement_is_the_code_compiling_it_whole_makes(
        round_, flavor, part) -> None:
    """mutant_calls compiles only the top-level statement a mutant changed (Statements): each
    function it then runs is the one compiling the whole mutant makes, bytecode, constants,
    names, flags and every instruction's line and column alike. Every seventh mutant of each
    reference part, and every one whose lines after the change moved. A slip made at every
    site (`every_*`) may change several statements: those compile whole (Statements gives
    None, and mutant_calls compiles the source)."""
    source = (round_.reference_dir(flavor) / part.file).read_text()
    statements = Statements.of(source, part.file)
    assert statements is not None
    lines = len(source.splitlines())
    for mutant in [m for i, m in enumerate(mutants.mutants(source))
                   if i % 7 == 0 or len(m.source.splitlines()) != lines]:
        split = statements.compiled(mutant.source)
        if split is None and mutant.operator.startswith("every_"):
            continue
        assert split is not None, mutant.after
        assert functions(split) == functions([compile(mutant.source, part.file, "exec")])


def functions(codes: list[CodeType]) -> dict[tuple[str, int], tuple[object, ...]]:
    """Every function and class body compiled into `codes`, by name and first line: what it
    runs, as same_code reads it, and where each instruction says it is."""
    found: dict[tuple[str, int], tuple[object, ...]] = {}
    for code in codes:
        for const in code.co_consts:
            if isinstance(const, CodeType):
                found[const.co_name, const.co_firstlineno] = (
                    const.co_code, const.co_names, const.co_varnames, const.co_flags,
                    list(const.co_positions()),
                    [c for c in const.co_consts if not isinstance(c, CodeType)])
                found |= functions([const])
    return found


UNUSUAL_MODULE = (
    "import numpy as np\n"
    "from functools import lru_cache as cached\n"
    "SCALE = 2\n"
    "\n"
    "@cached(maxsize=None)\n"
    "def twice(n):\n"
    "    return n * SCALE\n"
    "class Op:\n"
    "    @staticmethod\n"
    "    def run(x):\n"
    "        y = np.tanh(x)\n"
    "        return (y\n"
    "                + twice(1))\n"
    "def later(x):\n"
    "    return Op.run(x) - 1  # a comment\n"
    "LATER = later(0.0)\n")


@pytest.mark.parametrize(("old", "new"), [
    # a decorated function's body
    ("    return n * SCALE\n", "    return n + SCALE\n"),
    # a method's statement over two lines made one: every line after it moves up
    ("        return (y\n                + twice(1))\n", "        return y + twice(2)\n"),
    # a statement made two lines: every line after it moves down
    ("    return Op.run(x) - 1  # a comment\n", "    z = Op.run(x)\n    return z - 1\n"),
])
def test_a_changed_statement_in_an_unusual_module_is_loaded_as_the_whole_module_runs(
        old: str, new: str) -> None:
    """Decorators, a class, names imported under others, module-level code that calls a
    function: loaded statement by statement, the module's names hold what running it whole
    gives, and its functions are the same code."""
    changed = UNUSUAL_MODULE.replace(old, new)
    assert changed != UNUSUAL_MODULE
    statements = Statements.of(UNUSUAL_MODULE, "unusual.py")
    assert statements is not None
    split: dict[str, Any] = {}
    assert statements.load(changed, split)
    whole: dict[str, Any] = {}
    exec(compile(changed, "unusual.py", "exec"), whole)
    assert split["LATER"] == whole["LATER"]
    assert split["twice"](3) == whole["twice"](3)
    assert functions(statements.compiled(changed) or []) == \
        functions([compile(changed, "unusual.py", "exec")])


@pytest.mark.parametrize("changed", [
    # a change outside every statement's lines (a comment between two)
    UNUSUAL_MODULE.replace("SCALE = 2\n\n", "SCALE = 2\n# note\n"),
    # changes in two statements
    UNUSUAL_MODULE.replace("n * SCALE", "n - SCALE").replace("- 1", "+ 1"),
])
def test_a_source_that_is_no_change_inside_one_statement_is_compiled_whole(changed: str) -> None:
    statements = Statements.of(UNUSUAL_MODULE, "unusual.py")
    assert statements is not None
    assert statements.compiled(changed) is None
    assert not statements.load(changed, {})


@pytest.mark.parametrize("original", [
    "x = 1; y = 2\ndef f():\n    return x\n",  # two statements on one line
    "def f(:\n",  # no Python
])
def test_a_module_whose_statements_cannot_be_split_is_compiled_whole(original: str) -> None:
    assert Statements.of(original, "odd.py") is None


def test_each_operator_makes_the_slip_it_names() -> None:
    source = ("def f(A, B, x, n):\n"
              "    total = A.sum(axis=0, keepdims=True)\n"
              "    for i in range(1, n):\n"
              "        total += A[i] @ B.T\n"
              "    if n > 2:\n"
              "        total = total * 2\n"
              "    total = np.maximum(total, 0)\n"
              "    return -total\n")
    made = {(m.operator, m.after) for m in mutants.mutants(source)}
    for expected in [("swap_operands", "total += B.T @ A[i]"),
                     ("drop_transpose", "total += A[i] @ B"),
                     ("assign_for_accumulate", "total = A[i] @ B.T"),
                     ("shift_index", "total += A[i - 1] @ B.T"),
                     ("shift_bound", "for i in range(0, n):"),
                     ("boundary", "if n >= 2:"),
                     ("mean_for_sum", "total = A.mean(axis=0, keepdims=True)"),
                     ("wrong_axis", "total = A.sum(axis=1, keepdims=True)"),
                     ("drop_keepdims", "total = A.sum(axis=0)"),
                     ("drop_factor", "total = total"),
                     ("flip_sign", "return total"),
                     ("reverse_loop", "for i in reversed(list(range(1, n))):"),
                     ("other_variable", "total = B.sum(axis=0, keepdims=True)"),
                     ("sibling_function", "total = np.max(total, 0)")]:
        assert expected in made, expected
    divided = {(m.operator, m.after) for m in mutants.mutants(
        "def g(x, s):\n    y = x / s\n    return y * s\n")}
    assert {("inverted_operator", "y = x * s"), ("inverted_operator", "return y / s")} <= divided
    # A quotient by a constant is a factor's slip (drop_factor, double_factor), not this one.
    assert not any(op == "inverted_operator" for op, _ in {(m.operator, m.after) for m in
                   mutants.mutants("def h(x):\n    return x / 2\n")})
    # Loop counters and sizes are not read for arrays; validation is never mutated.
    assert not any(op == "other_variable" and "i." in after for op, after in made)


def test_the_operators_added_for_the_fifth_fresh_set_make_the_slips_they_name() -> None:
    """Division spelt the other way, a keyword bound on the other side, a whole-number bound
    off by one in a test, a bound a statement repeats shifted everywhere in it at once, the
    return after a loop indented into it, a module function's transpose dropped."""
    source = ("def f(x, W, n, tiny):\n"
              "    step = n // 2\n"
              "    scale = x.clamp(min=tiny) / n\n"
              "    left = W[0] if n > 0 else W[1]\n"
              "    new = x.copy()\n"
              "    for i in range(n):\n"
              "        new[:step] = x[:step]\n"
              "    return np.matmul(np.swapaxes(W, -1, -2), new) * scale + left\n")
    made = {(m.operator, m.after) for m in mutants.mutants(source)}
    for expected in [("true_division", "step = n / 2"),
                     ("floor_division", "scale = x.clamp(min=tiny) // n"),
                     ("opposite_extreme", "scale = x.clamp(max=tiny) / n"),
                     ("shift_bound", "left = W[0] if n > 1 else W[1]"),
                     ("shift_bound", "new[:step - 1] = x[:step - 1]"),
                     ("return_in_loop", "for i in range(n):"),
                     ("drop_transpose",
                      "return np.matmul(W, new) * scale + left")]:
        assert expected in made, expected


def test_the_operators_added_for_the_eighth_fresh_set_make_the_slips_they_name() -> None:
    """A loss summed where it is averaged (torch's losses average unless told: through their
    `reduction`) and back, a `slice(...)` bound off by one, a loop that skips its first step
    (`range(1, n)` for `range(n)`), and two pieces joined in the wrong order (a tuple added,
    neighbouring arrays of a concatenation)."""
    source = ("import torch\nimport torch.nn.functional as F\n\n"
              "def f(p, y, q, a, b, shape, k, size, step):\n"
              "    loss = F.mse_loss(p, y)\n"
              "    total = F.cross_entropy(q, y, reduction='sum')\n"
              "    left = slice(step - 1, size, 2 * step)\n"
              "    for t in range(size):\n"
              "        loss = loss + t\n"
              "    padded = (1,) * k + shape\n"
              "    return torch.cat([a, b], dim=0)[left], loss, total, padded\n")
    made = {(m.operator, m.after) for m in mutants.mutants(source)}
    for expected in [
            ("sum_for_mean", "loss = F.mse_loss(p, y, reduction='sum')"),
            ("mean_for_sum", "total = F.cross_entropy(q, y, reduction='mean')"),
            ("shift_bound", "left = slice(step, size, 2 * step)"),
            ("shift_bound", "left = slice(step - 1, size - 1, 2 * step)"),
            ("shift_bound", "for t in range(1, size):"),
            ("swap_joined", "padded = shape + (1,) * k"),
            ("swap_joined", "return (torch.cat([b, a], dim=0)[left], loss, total, padded)")]:
        assert expected in made, expected
    # Numbers added commute, and an array joined to itself has no other order.
    plain = {m.operator for m in mutants.mutants(
        "def g(a, n):\n    return np.concatenate([a, a]) + (n + 1)\n")}
    assert "swap_joined" not in plain


def test_the_operators_added_for_the_seventh_fresh_set_make_the_slips_they_name() -> None:
    """An accumulator started from the wrong value (the identity for zeros, ones for zeros and
    back), a comparison turned round, the context that turns autograd on for the one that
    turns it off, two methods of a chain called in the other order, the arguments of a
    module class's method (an autograd Function's apply) passed in each other's places, and a
    function of one array moved across an operation of two (`|max(a, b)|` for
    `max(|a|, |b|)`, `|a| - |b|` for `|a - b|`)."""
    source = ("import torch\n\n"
              "class Scan(torch.autograd.Function):\n"
              "    pass\n\n"
              "def f(a, b, h0, x, n, gap, limit):\n"
              "    adj = np.zeros((n, n))\n"
              "    prod = np.eye(n)\n"
              "    total = np.ones_like(x)\n"
              "    kink = gap <= limit\n"
              "    with torch.no_grad():\n"
              "        y = x.pow(2).mean()\n"
              "    return Scan.apply(a, b, h0) + adj @ prod + y * total * kink\n")
    made = {(m.operator, m.after) for m in mutants.mutants(source)}
    for expected in [("other_initial_value", "adj = np.eye(n)"),
                     ("other_initial_value", "adj = np.ones((n, n))"),
                     ("other_initial_value", "prod = np.zeros((n, n))"),
                     ("other_initial_value", "total = np.zeros_like(x)"),
                     ("reversed_comparison", "kink = gap >= limit"),
                     ("sibling_function", "with torch.enable_grad():"),
                     ("swap_calls", "y = x.mean().pow(2)"),
                     ("swap_arguments",
                      "return Scan.apply(b, a, h0) + adj @ prod + y * total * kink")]:
        assert expected in made, expected
    moved = {(m.operator, m.after) for m in mutants.mutants(
        "def h(a, b, x):\n"
        "    scale = torch.maximum(a.abs(), b.abs())\n"
        "    gap = np.abs(a - b)\n"
        "    return scale * gap + np.sqrt(x)\n") if m.operator == "moved_call"}
    assert moved == {("moved_call", "scale = torch.maximum(a, b).abs()"),
                     ("moved_call", "gap = np.abs(a) - np.abs(b)")}
    # A method of a class the module does not define keeps its arguments' order, and a chain
    # of one method twice has no other order.
    plain = {(m.operator, m.after) for m in mutants.mutants(
        "def g(x, y, z):\n    return torch.where(x, y, z).sum().sum()\n")}
    assert not any(op in ("swap_arguments", "swap_calls") for op, _ in plain)


@pytest.mark.parametrize(("name", "opening"), [
    ("dW", "Your dW is what you get"),
    ("the gradients", "Your gradients are what you get"),
    ("(dA, dB)", "Your (dA, dB) are what you get"),
    ("the loss and dlogits", "Your loss and dlogits are what you get"),
    ("the loss", "Your loss is what you get"),
    ("the running statistics", "Your running statistics are what you get"),
    ("combine((a1, b1), (a2, b2))", "Your combine((a1, b1), (a2, b2)) is what you get"),
])
def test_the_sentence_naming_a_slip_agrees_with_the_results_name(name: str,
                                                                   opening: str) -> None:
    """Every operator's sentence, for results named in the singular and the plural."""
    for operator, says in mutants.templates().items():
        if operator.startswith("repair"):
            continue  # not a slip: its sentence says the result is right once changed
        mutant = mutants.Mutant(operator, "x = a @ b", "x = b @ a", "")
        said = mutants.describe(mutant, name)
        if says.startswith("Your {what}"):
            assert said.startswith(opening), said


def test_an_einsum_is_mutated_through_its_subscripts() -> None:
    """Each term of an einsum's subscripts with its last two letters swapped (a transpose of
    an operand or of the result), and a two-term einsum's operands in each other's places
    with the subscripts kept: the slips a candidate who writes einsum makes, which no edit of
    a name or an operator reaches."""
    source = ("import numpy as np\n"
              "def f(dC, B):\n"
              "    return np.einsum('...ik,jk->...ij', dC, B)\n")
    made = {(m.operator, m.after) for m in mutants.mutants(source)
            if m.operator in ("einsum_transpose", "swap_operands")}
    assert made == {
        ("einsum_transpose", "return np.einsum('...ki,jk->...ij', dC, B)"),
        ("einsum_transpose", "return np.einsum('...ik,kj->...ij', dC, B)"),
        ("einsum_transpose", "return np.einsum('...ik,jk->...ji', dC, B)"),
        ("swap_operands", "return np.einsum('...ik,jk->...ij', B, dC)"),
    }


def test_the_operators_for_sizes_precision_members_and_loops_make_the_slips_they_name() -> None:
    source = ("def f(model, params, x, steps):\n"
              "    n = x.shape[0]\n"
              "    half = n // 2\n"
              "    y = x.astype(np.float64) + x.astype(np.float64)\n"
              "    z = model.head_a(y) + model.head_b(y)\n"
              "    w = params['W1'] @ params['W2']\n"
              "    for step in range(steps):\n"
              "        out = model.trunk(x)\n"
              "        w = w + out[step]\n"
              "    return w + x.sum() + x.double(), half, z\n")
    made = {(m.operator, m.after) for m in mutants.mutants(source)}
    for expected in [("other_dimension", "n = x.shape[1]"),
                     ("other_dimension", "n = x.shape[-1]"),
                     ("double_factor", "half = n // 4"),
                     ("drop_factor", "half = n"),
                     ("lower_precision", "y = x.astype(np.float32) + x.astype(np.float32)"),
                     ("lower_precision", "y = x.astype(np.float32) + x.astype(np.float64)"),
                     ("other_member", "z = model.head_b(y) + model.head_b(y)"),
                     ("other_member", "z = model.trunk(y) + model.head_b(y)"),
                     ("other_member", "w = params['W2'] @ params['W2']"),
                     ("shift_range", "for step in range(1, steps + 1):"),
                     ("hoisted_step", "out = model.trunk(x) ; for step in range(steps):")]:
        assert expected in made, expected
    # A step that reads the loop's counter cannot run before the loop; an array's methods
    # (x.sum, x.double) are not members to mistake for one another.
    assert not any(op == "hoisted_step" and after.startswith("w = w + out[step]")
                   for op, after in made)
    assert not any(op == "other_member" and ("x.sum()" not in after or "x.double()" not in after)
                   for op, after in made if after.startswith("return"))
    # The front of a shape is tried first: on a matrix shape[1] and shape[-1] are one size.
    order = [m.after for m in mutants.mutants(source) if m.operator == "other_dimension"]
    assert order[:2] == ["n = x.shape[1]", "n = x.shape[-1]"]


def test_the_operators_for_half_a_formula_make_the_slips_they_name() -> None:
    source = ("def f(a, b, s, h, n, scale, lr, p):\n"
              "    d = (a - b - h * s) / scale\n"
              "    var = s * (n / (n - 1))\n"
              "    error = np.max(np.abs(a - b) / np.sqrt(scale))\n"
              "    worst = max(a, key=len)\n"
              "    before = h[:-1]\n"
              "    p -= lr * s\n"
              "    return d, var\n")
    missing = {
        ("drop_term", "d = (a - b) / scale"), ("drop_operand", "d = a - b - h * s"),
        ("drop_operand", "var = s"), ("reverse_difference", "d = (b - a - h * s) / scale"),
        ("reverse_ratio", "var = s * ((n - 1) / n)"),
        ("drop_call", "error = np.max((a - b) / np.sqrt(scale))"),
        ("drop_call", "error = np.max(np.abs(a - b) / scale)"),
        ("opposite_extreme", "error = np.min(np.abs(a - b) / np.sqrt(scale))"),
        ("opposite_extreme", "worst = min(a, key=len)"), ("other_end", "before = h[1:]"),
        ("flip_sign", "p += lr * s"), ("flip_sign", "return (-d, var)"),
        ("swap_results", "return (var, d)"),
    } - {(m.operator, m.after) for m in mutants.mutants(source)}
    assert not missing
    # Index arithmetic is off_by_one's: no term of `i + 1` is dropped, no `1 - i` made.
    indexed = {(m.operator, m.after) for m in mutants.mutants(
        "def g(x, i):\n    return x[i + 1] - x[i - 1]\n")}
    assert {(op, after) for op, after in indexed
            if op in ("drop_term", "reverse_difference")} == {
        ("drop_term", "return x[i + 1]"), ("reverse_difference", "return x[i - 1] - x[i + 1]")}


def _case() -> Case:
    return Case({"x": np.zeros(3)}, (("N", 3),))


def _ran(value: object = None, raised: str | None = None) -> list[dict[str, object]]:
    return [{"value": value, "raised": raised}]


def test_a_mutant_that_zeroes_the_result_does_not_match_a_result_that_is_merely_tiny() -> None:
    zero = mutants.Mutant("drop_step", "y = f(x)", "", "")
    scaled = mutants.Mutant("flip_sign", "a", "b", "")
    tiny = np.array([1e-13, -2e-13, 3e-13])
    found = mutants.matching([zero, scaled], [_ran(np.zeros(3)), _ran(tiny.copy())],
                             [(_case(), tiny)])
    assert found == [scaled]
    assert mutants.matching([zero], [_ran(np.zeros(3))], [(_case(), np.zeros(3))]) == [zero]


@pytest.mark.parametrize("size", [1e-13, 1e-6, 0.3])
def test_tiny_results_match_a_mutant_only_at_its_own_scale(size: float) -> None:
    """Two slips that both leave a result far below 1 (a step too small, by different factors)
    differ by far more than rounding; both are within the truth's absolute tolerance of each
    other. The mutant whose result is the candidate's, to rounding, is the one named."""
    yours = size * np.array([1.0, -2.0, 3.0])
    four_times = mutants.Mutant("double_factor", "a", "b", "")
    same = mutants.Mutant("inverted_operator", "c", "d", "")
    found = mutants.matching([four_times, same],
                             [_ran(4 * yours), _ran(yours * (1 + 1e-12))], [(_case(), yours)])
    assert found == [same]
    # A tuple of results, one of them a plain number, is scaled alike.
    pair = (yours, float(size))
    assert mutants.matching([same], [[{"value": (yours * (1 + 1e-12), size), "raised": None}]],
                            [(_case(), pair)]) == [same]
    assert mutants.matching([same], [[{"value": (yours, 2 * size), "raised": None}]],
                            [(_case(), pair)]) == []


@pytest.mark.parametrize("nan", [float("nan"), np.array([np.nan, np.inf]),
                                 {"loss": float("nan"), "grad": np.full(2, np.nan)}])
def test_results_with_no_finite_number_name_no_slip(nan: object) -> None:
    """NaN (a 0 / 0, a log of 0) comes of many slips alike: a mutant that makes NaN where the
    candidate's results are nothing else names none of them; one finite number anywhere in
    the results, and it may."""
    made = mutants.Mutant("opposite_extreme", "a", "b", "")
    assert mutants.matching([made], [_ran(nan)], [(_case(), nan)]) == []
    some = np.array([np.nan, 2.0])
    assert mutants.matching([made], [[{"value": nan, "raised": None},
                                      {"value": some.copy(), "raised": None}]],
                            [(_case(), nan), (_case(), some)]) == [made]


def test_a_mutant_that_raised_or_ran_too_long_matches_no_result() -> None:
    made = mutants.Mutant("flip_sign", "a", "b", "")
    actual = np.ones(3)
    assert mutants.matching([made], [None], [(_case(), actual)]) == []
    assert mutants.matching([made], [_ran(raised="IndexError")], [(_case(), actual)]) == []


def test_a_variant_of_the_candidates_code_is_cut_short_where_it_cannot_be_right(
        tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    """In a repair (no reference), a variant that raises, or answers to the bit as the
    candidate's code does, on a case that code gets wrong is answered NOT_RIGHT from there on
    and runs no further case; any other variant is run on every case, and a variant of the
    reference's code (a diagnosis) always is."""
    from pathlib import Path

    from grader.probes.api import Api
    from grader.probes.backends import NumpyBackend
    from grader.probes.library import NOT_RIGHT, mutant_calls

    seen: list[float] = []
    monkeypatch.setitem(sys.modules, "calls_seen", SimpleNamespace(seen=seen))
    code = ("from calls_seen import seen\n"
            "def scaled(x):\n"
            "    seen.append(float(x[0]))\n"
            "    return x * 2\n")
    module = ModuleType("scaled_part")
    module.__file__ = str(tmp_path / "scaled_part.py")
    exec(compile(code, module.__file__, "exec"), module.__dict__)
    api = Api(module, NumpyBackend(), Path(tmp_path))
    cases = [{"inputs": {"x": np.array([float(n)])}} for n in (1, 2, 3)]
    variants = [code.replace("x * 2", "x + x"),        # answers as the code does
                code.replace("x * 2", "x[5]"),         # raises
                code.replace("x * 2", "x * 3"),        # answers otherwise
                code.replace("x * 2", "x * 2 if x[0] > 1 else x * 3")]  # alike from case 2
    answers = mutant_calls(api, variants, [], "scaled", cases, args=["x"], original=code)
    assert answers[0] == answers[1] == [NOT_RIGHT] * 3
    assert [a["value"].tolist() for a in answers[2]] == [[3.0], [6.0], [9.0]]  # type: ignore[index]
    assert answers[3][0]["value"].tolist() == [3.0]  # type: ignore[index]
    assert answers[3][1:] == [NOT_RIGHT] * 2
    # the code's own run on each case, then: one case, one, three, two
    assert seen == [1.0, 2.0, 3.0, 1.0, 1.0, 1.0, 2.0, 3.0, 1.0, 2.0]


def test_a_raise_is_named_by_the_mutant_raising_alike_at_a_line_of_the_same_shape() -> None:
    pushed = mutants.Mutant("shift_index", "adjoint = adjoint + dP[i]",
                            "adjoint = adjoint + dP[i + 1]", "")
    other = mutants.Mutant("shift_index", "adjoint = adjoint @ W[i].T",
                           "adjoint = adjoint @ W[i + 1].T", "")
    raised = {"type": "IndexError", "message": "index 1 is out of bounds",
              "where": "exercises/part3_backward.py, line 17: adj = adj + dP[k + 1]"}
    outputs = [_ran(raised="IndexError"), _ran(raised="IndexError")]
    assert mutants.raising_alike([other, pushed], outputs, raised) == [pushed]
    assert mutants.raising_alike([pushed], [_ran(raised="ValueError")], raised) == []
    assert mutants.raising_alike([pushed], outputs[:1], {**raised, "where": ""}) == []


def test_lines_that_differ_only_in_their_names_have_one_shape() -> None:
    assert mutants.shape("adj = adj + dP[k + 1]") == mutants.shape("a = a + b[i + 1]")
    assert mutants.shape("adj = adj + dP[k + 1]") != mutants.shape("a = b + b[i + 1]")
    assert mutants.shape("for i in range(n - 1, 0, -1):") == mutants.shape(
        "for k in range(count - 1, 0, -1):")
    assert mutants.shape("") is None and mutants.shape("x = (") is None


E = np.arange(1.0, 13.0).reshape(3, 2, 2)


@pytest.mark.parametrize(("actual", "said"), [
    (-E, "your dW equals the expected values with the sign flipped."),
    (2 * E, "your dW is the expected values times 2 (a factor 2 too many)."),
    (E / 3, "your dW is the expected values times 1/3 (a factor 3 missing)."),
    (np.swapaxes(E, -1, -2), "your dW equals the expected values with the last two axes "
                             "swapped (transposed)."),
    (E[::-1], "your dW equals the expected values in reverse order along the first axis."),
    (np.concatenate([E[:1] * 0, E[:-1]]), "your dW[i] holds the expected dW[i - 1]: one slot "
                                          "late."),
    (np.concatenate([E[:2], E[2:] + 1]), "your dW is right at dW[0], dW[1] and wrong at "
                                         "dW[2]."),
    (np.where(E > 6, np.nan, E), "your dW has 6 NaN or infinite entries where every expected "
                                 "value is finite."),
])
def test_what_holds_of_a_wrong_array(actual: np.ndarray, said: str) -> None:
    assert symptoms.describe(actual, E, "float64", "dW") == said


def test_memory_never_written_is_told_apart_from_every_slip_of_arithmetic() -> None:
    """Bytes an empty array held (1e-310, 1e+113) lie dozens of orders of magnitude from any
    value arithmetic on the inputs makes; a factor, however large, and a right entry that is
    tiny, do not read as them."""
    garbage = E.copy()
    garbage[1, 0, 1], garbage[2, 1, 1] = 6.9e-310, -7.6e113
    assert symptoms.describe(garbage, E, "float64", "dW") == (
        "your dW[1, 0, 1] is 6.9e-310 where 6 was expected (and 1 more entry as far off): no "
        "arithmetic on these inputs makes such values, but memory never written does (an array "
        "from empty or empty_like holds whatever bytes were there), so some slots of your dW "
        "are never assigned.")
    for actual in (E * 1e12, E / 1e12, E + 1e20, np.where(E > 6, 0.0, E)):
        assert "never written" not in (symptoms.describe(actual, E, "float64", "dW") or "")
    tiny = E.copy()
    tiny[0, 0, 0] = 1e-40
    wrong = tiny.copy()
    wrong[2] += 1
    assert symptoms.describe(wrong, tiny, "float64", "dW") == (
        "your dW is right at dW[0], dW[1] and wrong at dW[2].")


def test_right_values_whose_shape_differs_in_axes_of_size_one_are_said_to_be_so() -> None:
    """A keepdims dropped or kept, a squeeze(), or a size-1 axis re-added at the other end,
    keeps every value: that is what holds, with what makes such a shape in the direction it
    differs. Other shapes, or other values, say nothing of it."""
    moved = ("holds the expected values in shape (1, 3, 2, 2) where (3, 1, 2, 2) is expected: "
             "only axes of size 1 differ (an axis of size 1 at the other end)")
    batched = E.reshape(3, 1, 2, 2)
    assert moved in symptoms.describe({"dA": E, "dB": E.reshape(1, 3, 2, 2)},
                                      {"dA": E, "dB": batched}, "float64", "grads")
    assert symptoms.describe(E[0, 0][None], E[0, 0], "float64", "mean") == (
        "your mean holds the expected values in shape (1, 2) where (2,) is expected: only axes "
        "of size 1 differ (axes of size 1 too many: a keepdims kept, or an axis of size 1 "
        "added).")
    assert symptoms.describe(E[0, :1], E[0, :1].reshape(1, 1, 2), "float64", "h") == (
        "your h holds the expected values in shape (1, 2) where (1, 1, 2) is expected: only "
        "axes of size 1 differ (axes of size 1 lost: a keepdims dropped, or a squeeze() that "
        "removes every axis of size 1, a batch of one's too).")
    assert symptoms.describe(2 * E.reshape(1, 3, 2, 2), batched, "float64", "dB") is None
    assert symptoms.describe(E.reshape(3, 4), E, "float64", "dB") is None


def test_a_factor_that_is_one_of_the_cases_sizes_is_said_to_be_one() -> None:
    dims = (("M", 3), ("N", 5), ("K", 1))
    assert symptoms.describe(E / 5, E, "float64", "dA", dims) == (
        "your dA is the expected values times 0.2, as if divided by N (5 in this case).")
    assert symptoms.describe(3 * E, E, "float64", "dA", dims) == (
        "your dA is the expected values times 3 (a factor 3 too many), as if multiplied by M "
        "(3 in this case).")
    # A size of 1 is no factor, and a factor that is no size says nothing more.
    assert symptoms.describe(E / 7, E, "float64", "dA", dims) == (
        "your dA is the expected values times 0.1429.")


def test_what_holds_of_a_wrong_tree_says_which_pieces_are_right() -> None:
    expected = {"dW1": E, "db1": E[0, 0], "dW2": E[1]}
    actual = {"dW1": 2 * E, "db1": 2 * E[0, 0], "dW2": E[1]}
    assert symptoms.describe(actual, expected, "float64", "grads") == (
        "dW2 is right; your dW1 and db1 are the expected values times 2 (a factor 2 too many).")
    unlike = {**actual, "db1": 3 * E[0, 0], "dW2": -E[1]}
    assert symptoms.describe(unlike, expected, "float64", "grads") == (
        "your dW1 is the expected values times 2 (a factor 2 too many); your db1 is the "
        "expected values times 3 (a factor 3 too many); your dW2 equals the expected values "
        "with the sign flipped.")


def test_a_factor_equal_to_several_sizes_is_told_apart_by_the_other_wrong_cases() -> None:
    """N = M = K = 3 in the first case: the second, where only N is 5, names N alone; without
    it, or where the others cannot tell, every size that fits stays named."""
    first = [("M", 3), ("K", 3), ("N", 3)]
    second = (E / 5, E, [("M", 2), ("K", 4), ("N", 5)])
    said = symptoms.describe({"dA": E / 3}, {"dA": E}, "float64", "grads", first,
                             [({"dA": second[0]}, {"dA": second[1]}, second[2])])
    assert said == "your dA is the expected values times 1/3 (a factor 3 missing), as if " \
        "divided by N (3 in this case)."
    alone = symptoms.describe({"dA": E / 3}, {"dA": E}, "float64", "grads", first)
    assert alone is not None and alone.endswith("as if divided by M or K or N (3 in this case).")
    unlike = symptoms.describe({"dA": E / 3}, {"dA": E}, "float64", "grads", first,
                               [({"dA": E * 7}, {"dA": E}, second[2])])
    assert unlike == alone


def test_a_single_number_off_by_a_factor_is_named_by_the_wrong_cases_together() -> None:
    """One number (a loss, a norm) off by a factor in one case could be any error; the factor
    is named where the other wrong cases share it: a ratio of two sizes (a mean over the wrong
    count), one size, or one constant. A factor they do not share says nothing."""
    def cases(factor: Callable[[int, int], float]) -> list[tuple[Any, Any, list[tuple[str, int]]]]:
        made = []
        for b, c, total in ((1, 2, 3.0), (8, 5, 7.5), (3, 7, 2.25), (16, 4, 40.0)):
            mean = total / b
            made.append((np.float64(mean * factor(b, c)), np.float64(mean),
                         [("B", b), ("C", c)]))
        return made

    def said(made: list[tuple[Any, Any, list[tuple[str, int]]]], others: int = 3) -> str | None:
        actual, expected, dims = made[0]
        return symptoms.describe({"loss": actual, "dlogits": E}, {"loss": expected, "dlogits": E},
                                 "float64", "out", dims,
                                 [({"loss": a, "dlogits": E}, {"loss": t, "dlogits": E}, d)
                                  for a, t, d in made[1:1 + others]])

    right = "dlogits is right, loss is not."
    assert said(cases(lambda b, c: b / c)) == (
        "dlogits is right; your loss is the expected value times 0.5, as if divided by C where B "
        "belongs (B = 1, C = 2 in this case).")
    assert said(cases(lambda b, c: c)) == (
        "dlogits is right; your loss is the expected value times 2, as if multiplied by C (2 in "
        "this case).")
    assert said(cases(lambda b, c: 0.5)) == (
        "dlogits is right; your loss is the expected value times 1/2 (a factor 2 missing), in "
        "every wrong case.")
    assert said(cases(lambda b, c: b / c), others=1) == right  # two cases are not enough
    assert said(cases(lambda b, c: 1.0 + b / 10)) == right  # no shared factor


def test_a_ratio_of_two_sizes_is_named_only_where_another_wrong_case_has_it_too() -> None:
    """Small sizes make many fractions: 0.75 is N = 3 over D = 4 by chance as often as by a
    slip. Another wrong case with the same ratio of its own sizes names it."""
    dims = [("N", 3), ("D", 4)]
    other = np.arange(1.0, 7.0).reshape(2, 3)
    assert symptoms.describe(0.75 * E, E, "float64", "dW", dims) == (
        "your dW is the expected values times 0.75.")
    assert symptoms.describe(0.75 * E, E, "float64", "dW", dims,
                             [(0.4 * other, other, [("N", 2), ("D", 5)])]) == (
        "your dW is the expected values times 0.75, as if divided by D where N belongs "
        "(N = 3, D = 4 in this case).")
    assert symptoms.describe(0.75 * E, E, "float64", "dW", dims,
                             [(0.75 * other, other, [("N", 2), ("D", 5)])]) == (
        "your dW is the expected values times 0.75.")


def test_single_precision_of_a_small_result_is_said_where_a_larger_wrong_case_shows_it() -> None:
    """A float64 result right only to float32's rounding: said of 4 entries or more; one of
    fewer is too few alone, and enough where another wrong case of 4 or more errs alike (a float32
    h0 made the recurrence wrong at T=1 and at T=8 alike)."""
    small, large = E[0, 0, :].copy(), E.copy()
    rounded = [x + 1e-6 * x for x in (small, large)]
    said = ("your h agrees with the expected values only to about 6 significant digits, single "
            "precision's: part of it was computed in float32 (keep the inputs' dtype "
            "throughout).")
    assert symptoms.describe(rounded[1], large, "float64", "h") == said
    assert symptoms.describe(rounded[0], small, "float64", "h") != said
    assert symptoms.describe({"h": rounded[0]}, {"h": small}, "float64", "result", (),
                             [({"h": rounded[1]}, {"h": large}, ())]) == said
    assert symptoms.describe({"h": rounded[0]}, {"h": small}, "float64", "result", (),
                             [({"h": 2 * large}, {"h": large}, ())]) != said


def test_nothing_simple_holds_of_a_result_unlike_the_truth() -> None:
    rng = np.random.default_rng(0)
    assert symptoms.describe(rng.standard_normal((1, 3, 3)), rng.standard_normal((1, 3, 3)),
                             "float64", "P") is None


def _sized(n: int, dtype: str = "float64") -> Case:
    return Case({}, (("N", n), ("D", 2)), dtype)


def test_which_cases_came_out_wrong() -> None:
    by_size = [_sized(n) for n in (0, 1, 2, 5)]
    assert symptoms.where_wrong(by_size, [True, True, False, False]) == (
        "wrong only where N >= 2 (right in every case with N < 2)")
    by_dtype = [_sized(3, "float64"), _sized(3, "float32"), _sized(4, "float32")]
    assert symptoms.where_wrong(by_dtype, [True, False, False]) == (
        "wrong only in float32: right in float64")
    assert symptoms.where_wrong(by_size, [False] * 4) is None
    assert symptoms.where_wrong(by_size, [False, True, False, True]) == (
        "wrong only in N=0, D=2, float64; N=2, D=2, float64 (right in the other 2 cases)")
    many = [_sized(n) for n in range(1, 9)]
    assert symptoms.where_wrong(many, [n % 2 == 0 for n in range(1, 9)]) == (
        "wrong in 4 of 8 cases, right in the rest")
    assert symptoms.where_wrong(many, [n in (3, 6) for n in range(1, 9)]) == (
        "right only in N=3, D=2, float64; N=6, D=2, float64 (wrong in the other 6 cases)")


def test_a_slip_far_along_a_long_statement_stays_in_view() -> None:
    source = ("def f(A, B):\n"
              "    return {'first': A @ B, 'second': B @ A, 'third': A.sum(axis=0), "
              "'fourth': B.sum(axis=0)}\n")
    made = [m for m in mutants.mutants(source) if m.operator == "wrong_axis"
            and "'fourth'" in m.after]
    assert made and all(len(m.before) <= mutants.SHOWN and len(m.after) <= mutants.SHOWN
                        for m in made)
    assert any(m.after.endswith("'fourth': B.sum(axis=1)}") and m.after.startswith("...")
               for m in made)


@pytest.mark.parametrize(("where", "own"), [
    ("exercises/part2.py, line 38: raise ValueError(f'dC must be {expected}')", "line 38"),
    ("exercises/part2.py, line 7:     raise ValueError('no')", "line 7"),
    ("exercises/part2.py, line 40: return dC @ B.T", None),     # the computation raised
    ("exercises/part2.py, line 9: raised = check(A)", None),      # a name, not a statement
    ("", None),
])
def test_valid_input_rejected_by_the_candidates_own_raise_gets_a_hint_about_its_guard(
        where: str, own: str | None) -> None:
    """A guard whose condition is wrong raises the candidate's own exception on valid input:
    the hint says so and where, instead of the recipe guessing at a cause."""
    from grader.checks.kinds import own_raise_hint

    hint = own_raise_hint({"type": "ValueError", "message": "m", "where": where, "bases": []})
    if own is None:
        assert hint is None
    else:
        assert hint is not None and f"before `raise` at {own} rejected input" in hint


def test_a_mutant_that_never_ends_costs_a_small_multiple_of_the_references_time() -> None:
    """A slip in a loop's step can make a loop that never ends; each such mutant is stopped
    once it has spent MUTANT_SLOWDOWN times the unmutated reference's CPU time on the cases
    (at least MUTANT_FLOOR_S), and the mutants after it still run."""
    import signal
    import time

    from grader.engine.rounds import get_round
    from grader.probes.api import Api
    from grader.probes.backends import make_backend
    from grader.probes.library import MUTANT_FLOOR_S, mutant_calls

    round_ = get_round("prefix-products")
    source = (round_.reference_dir("numpy") / round_.part("part1").file).read_text()
    endless = source.replace("    P[0] = W[0]\n", "    while W is not None:\n        pass\n")
    assert endless != source
    W = np.random.default_rng(0).standard_normal((3, 2, 2))
    case = Case({"W": W, "P": np.empty_like(W)}, (("N", 3),)).data()
    api = Api(ModuleType("baseline"), make_backend("numpy"), round_.reference_dir("numpy"))
    previous = signal.getsignal(signal.SIGVTALRM)
    began = time.process_time()
    try:
        results = mutant_calls(api, [endless, endless, source], [str(round_.folder), "part1"],
                               "prefix_products_out", [case], args=["W", "P"])
    finally:
        signal.signal(signal.SIGVTALRM, previous)
    spent = time.process_time() - began
    assert results[:2] == [[OUT_OF_TIME], [OUT_OF_TIME]]
    assert results[2] is not None and results[2][0]["raised"] is None
    np.testing.assert_allclose(results[2][0]["value"][2], W[0] @ W[1] @ W[2])
    assert spent < 2 * MUTANT_FLOOR_S + 0.5  # two endless mutants, each stopped near the floor


def test_a_warm_worker_asks_a_child_only_for_the_answers_it_has_not_kept(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """A diagnosis child runs the reference's mutants on judge-made cases, no candidate code:
    each (mutant, case) answer depends on the job, the mutant and the case alone, so a warm
    worker asks a child only for the rows and columns that lack one, and puts kept and fresh
    answers back in the stage's order. Answers stopped for time are asked again, as is
    everything of a child that ran out of time, died or answered out of shape, and every
    answer of a job that differs in anything else."""
    from grader.checks.base import Diagnosis
    from grader.runner import worker

    asked: list[tuple[object, list[str], list[int]]] = []
    failures = iter([{"kind": "error", "message": "the reference did not finish in time"},
                     {"kind": "observation", "data": [["a:1"]]}])

    def answer(source: str, case: int) -> str:
        return OUT_OF_TIME if source == "slow" else f"{source}:{case}"

    def child(grading: object, local: object, index: int, job: Any) -> object:
        (args,) = job.args
        asked.append((args.get("function"), args["sources"], args["cases"]))
        if args.get("function") == "broken":
            return next(failures)
        return {"kind": "observation",
                "data": [[answer(s, c) for c in args["cases"]] for s in args["sources"]]}

    monkeypatch.setattr(worker, "_reference_frame", child)
    monkeypatch.setattr(worker, "fork_spawner", lambda round_, sweep: None)
    monkeypatch.setattr(worker, "_answers", worker._Answers(worker.ANSWERS_KEPT_BYTES))
    grading = SimpleNamespace(round=None, reference_job=lambda index, probes: SimpleNamespace(
        spec={"probe": probes[0][0]}, args=(probes[0][1],)))
    diagnosis = Diagnosis("mutant_calls", (), ("sources", "cases"), lambda seen: None,
                          lasting=lambda a: a != OUT_OF_TIME)

    def stage(sources: list[str], cases: list[int], function: str = "f") -> object:
        frame = worker._diagnosis_frame(grading, 0, diagnosis,  # type: ignore[arg-type]
                                        {"function": function, "sources": sources,
                                         "cases": cases})
        return frame["data"] if frame["kind"] == "observation" else frame["kind"]

    grid = [["a:1", "a:2"], ["b:1", "b:2"], [OUT_OF_TIME, OUT_OF_TIME]]
    assert stage(["a", "b", "slow"], [1, 2]) == grid
    assert stage(["a", "b", "slow"], [1, 2]) == grid
    assert stage(["c", "a"], [3, 2]) == [["c:3", "c:2"], ["a:3", "a:2"]]
    assert stage(["b", "a"], [2, 3, 1]) == [["b:2", "b:3", "b:1"], ["a:2", "a:3", "a:1"]]
    assert stage(["a"], [1], "g") == [["a:1"]]
    assert stage(["a"], [1], "broken") == "error"
    assert stage(["a", "b"], [1], "broken") == "error"
    assert asked == [("f", ["a", "b", "slow"], [1, 2]), ("f", ["slow"], [1, 2]),
                     ("f", ["c", "a"], [3, 2]), ("f", ["b"], [3]), ("g", ["a"], [1]),
                     ("broken", ["a"], [1]), ("broken", ["a", "b"], [1])]


def test_a_worker_keeps_answers_within_its_bytes_dropping_the_least_recently_used() -> None:
    from grader.runner import worker

    size = len(pickle.dumps("x" * 100, protocol=pickle.HIGHEST_PROTOCOL))
    answers = worker._Answers(3 * size)
    for name in "abc":
        answers.keep((name, "", ""), "x" * 100)
    assert answers.get(("a", "", "")) == (True, "x" * 100)
    answers.keep(("d", "", ""), "x" * 100)
    answers.keep(("e", "", ""), "x" * 1000)  # larger than all it may keep: not kept
    assert [answers.get((name, "", ""))[0] for name in "abcde"] == [
        True, False, True, True, False]


@pytest.mark.parametrize("count", [0, 1, 15, 16, 17, 48, 49, 71, 400, 1000])
def test_the_stages_cover_every_mutant_once_likeliest_first(count: int) -> None:
    bounds = mutants.stage_bounds(count)
    covered = [i for start, end in bounds for i in range(start, end)]
    assert covered == list(range(count))
    assert all(end - start <= mutants.FIRST_STAGE * 2 ** k
               for k, (start, end) in enumerate(bounds))


def test_a_staged_diagnosis_names_what_the_whole_search_names_and_stops_there(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The mutants run in stages until one names the slip: the name is the one the first
    match over every mutant gives, and no later stage runs. The CPU budget is shared by the
    stages in proportion to their mutants."""
    from grader.checks.base import Verdict
    from grader.probes.library import MUTANTS_CPU_S
    from grader.runner import worker

    round_ = get_round("linear-recurrence")
    rng = np.random.default_rng(3)
    case = Case({"a": rng.standard_normal((4, 2)), "b": rng.standard_normal((4, 2)),
                 "h0": rng.standard_normal(2)}, (("T", 4),))
    found = mutants.mutants((round_.reference_dir("numpy")
                             / round_.part("part1").file).read_text())
    diagnosis = mutants.diagnosis(round_, "part1", "numpy", {"function": "recurrence_loop"},
                                  [(case, np.zeros(3))], "h")
    assert diagnosis is not None
    assert len(found) > 3 * mutants.FIRST_STAGE
    assert [len(s["sources"]) for s in diagnosis.stages] == [
        end - start for start, end in mutants.stage_bounds(len(found))]
    assert sum(s["budget_s"] for s in diagnosis.stages) == pytest.approx(MUTANTS_CPU_S)
    # The candidate's result is that of the 20th mutant (and of no earlier one): the second
    # stage names it, and the third never runs.
    target = mutants.FIRST_STAGE + 3
    outputs: list[object] = [[{"value": np.full(3, float(i)), "raised": None}]
                             for i in range(len(found))]
    wrong = [(case, np.full(3, float(target)))]
    diagnosis = mutants.diagnosis(round_, "part1", "numpy", {"function": "recurrence_loop"},
                                  wrong, "h")
    assert diagnosis is not None
    asked: list[int] = []

    def frame(grading: object, index: int, diagnosis: object,
              args: dict[str, object]) -> dict[str, object]:
        stage = len(asked)
        asked.append(stage)
        start, end = mutants.stage_bounds(len(found))[stage]
        return {"kind": "observation", "data": outputs[start:end]}

    monkeypatch.setattr(worker, "_diagnosis_frame", frame)
    grading = SimpleNamespace()
    named = worker._diagnosed(grading, 0, Verdict("failed", hint="old",  # type: ignore[arg-type]
                                                  diagnosis=diagnosis))
    assert named.hint == mutants.describe(found[target], "h")
    assert named.hint == diagnosis.name([outputs])
    assert asked == [0, 1]


def test_axes_of_size_one_are_left_out_and_vectors_made_columns() -> None:
    """A new axis left out (`h0[None]`, `x[:, None]`, `unsqueeze`, `expand_dims`), one kept
    where the subscript also indexes (`x[None, 0]` gives `x[0]`), and an operand of arithmetic
    made a column; a part's functions imported from a sibling part are called with their
    arguments swapped, as its own are."""
    source = ("from .part1 import combine\n\n"
              "def f(h0, h, x, b, t):\n"
              "    before = torch.cat([h0[None], h[:-1]])\n"
              "    y = x[:, None] * x[None, 0] + b\n"
              "    z = t.unsqueeze(0) - np.expand_dims(t, 0)\n"
              "    return combine(before, y) + z\n")
    made = {(m.operator, m.after) for m in mutants.mutants(source)}
    for expected in [("drop_new_axis", "before = torch.cat([h0, h[:-1]])"),
                     ("drop_new_axis", "y = x * x[None, 0] + b"),
                     ("drop_new_axis", "y = x[:, None] * x[0] + b"),
                     ("drop_new_axis", "z = t - np.expand_dims(t, 0)"),
                     ("drop_new_axis", "z = t.unsqueeze(0) - t"),
                     ("add_column_axis", "y = x[:, None] * x[None, 0] + b[:, None]"),
                     ("swap_arguments", "return combine(y, before) + z")]:
        assert expected in made, expected
    # An operand that already has a new axis is not made a column again.
    assert ("add_column_axis", "y = x[:, None][:, None] * x[None, 0] + b") not in made


def test_a_slip_the_file_shows_it_did_not_make_is_ruled_out() -> None:
    """Where the file holds the statement a slip changes as the reference has it (and not the
    slip's line), the slip is not the candidate's, whatever it computes; where the file holds
    the slip's line, it is borne out, and quoted as theirs."""
    reference = "def f(levels, dP):\n    grad = dP\n    upstream = grad\n    return grad\n"
    slip = mutants.Mutant("names", "return grad", "return upstream", "",
                          line_before="return grad", line_after="return upstream")
    assert mutants.by_evidence([slip], reference, reference) == ()
    slipped = reference.replace("return grad", "return upstream")
    assert mutants.by_evidence([slip], slipped, reference) == (slip,)
    assert mutants.quote(slip, slipped, reference) is True


def test_a_fix_that_reads_a_name_the_file_never_binds_is_not_shown() -> None:
    """The slip's line under the file's own names, and the fix renamed alike: shown where it
    can run, not where it would read a name only that line binds."""
    reference = ("def run(a, b, h0):\n    state = h0\n    for t in range(len(a)):\n"
                 "        state = a[t] * state + b[t]\n    return state\n")
    slip = mutants.Mutant("names", "state = a[t] * state + b[t]", "state = a[t] * h0 + b[t]", "",
                          line_before="state = a[t] * state + b[t]",
                          line_after="state = a[t] * h0 + b[t]")
    stale = reference.replace("state = a[t] * state", "new_state = a[t] * state").replace(
        "return state", "return new_state")
    assert mutants.quote(slip, stale, reference) is None
    renamed = reference.replace("state", "s").replace("s = a[t] * s", "s = a[t] * h0")
    assert mutants.quote(slip, renamed, reference) == ("s = a[t] * s + b[t]",
                                                        "s = a[t] * h0 + b[t]")


def test_a_fix_is_not_shown_with_a_name_of_the_references_the_file_lacks() -> None:
    """A slip that reads another variable: the file's line maps the slip's names onto its own,
    but the name the slip replaced appears nowhere in that line, so the fix would keep the
    reference's name (`dlogits`), which the file never binds: not a fix that runs, not shown.
    Where the file binds it, the same fix is shown."""
    reference = ("def f(logits, y):\n    rows = np.arange(len(y))\n"
                 "    log_probs = logits - 1\n    dlogits = np.exp(log_probs)\n"
                 "    dlogits[rows, y] -= 1\n    return dlogits\n")
    slip = mutants.Mutant("other_variable", "dlogits[rows, y] -= 1", "log_probs[rows, y] -= 1",
                          "", line_before="dlogits[rows, y] -= 1",
                          line_after="log_probs[rows, y] -= 1")
    own = ("def f(logits, y):\n    idx = np.arange(len(y))\n    d = np.exp(logits - 1)\n"
           "    d[y, idx] -= 1\n    return d\n")
    assert mutants.quote(slip, own, reference) is None
    binds_it = own.replace("d = np.exp", "d = dlogits = np.exp")
    assert mutants.quote(slip, binds_it, reference) == ("dlogits[y, idx] -= 1", "d[y, idx] -= 1")


def test_an_update_in_place_is_made_a_new_array_bound_to_the_name() -> None:
    """`x *= y` and torch's `x.mul_(y)` as a new array bound to `x` alone (out_of_place):
    what differs wherever another name shares the array; a slot's update (`P[i] += 1`) is
    left to the accumulation's slips."""
    source = ("def f(g, h, P):\n    da = g\n    da *= h\n    g.add_(h, alpha=2)\n"
              "    P[0] += 1\n    return da\n")
    made = {m.after for m in mutants.mutants(source) if m.operator == "out_of_place"}
    assert made == {"da = da * h", "g = g.add(h, alpha=2)"}


def test_a_reversed_array_is_left_in_its_own_order() -> None:
    """A flip as a method, a function of the library or a reversing slice, left out."""
    source = ("import numpy as np\nimport torch\ndef f(a, dh):\n    g = scan(a[::-1], dh)\n"
              "    h = np.flip(a, 0) + dh.flip(0) + torch.flip(a, (0,))\n    return g + h\n")
    made = {m.after for m in mutants.mutants(source) if m.operator == "unreversed"}
    assert made == {"g = scan(a, dh)", "h = a + dh.flip(0) + torch.flip(a, (0,))",
                    "h = np.flip(a, 0) + dh + torch.flip(a, (0,))",
                    "h = np.flip(a, 0) + dh.flip(0) + a"}


def test_an_iterable_two_steps_pass_over_is_made_a_list_before_the_first() -> None:
    """Once, before the first of the steps that iterate it (a loop or a comprehension), for a
    name a later step of the same block iterates too; not for one iterated once."""
    source = ("def f(params, xs):\n    if all(p.grad is None for p in params):\n        return\n"
              "    for x in xs:\n        print(x)\n    for p in params:\n        p.zero_()\n")
    made = [m.after for m in mutants.mutants(source) if m.operator == "listed_once"]
    assert made == ["params = list(params)"]


def test_a_validations_fix_rejects_by_a_raise_of_the_files_and_accepts_the_rest() -> None:
    """A repair of a validation: the malformed case must be rejected with the error by a
    `raise` of the candidate's file (a library call that broke is no validation), and the
    well-formed one answered without a raise; the first variant doing both is named."""
    source = ("import numpy as np\ndef f(a):\n    if a.ndim < 1:\n"
              "        raise ValueError('a must be a matrix')\n    return a @ a.T\n")
    malformed, valid = Case({"a": np.ones(3)}, label="a vector"), Case({"a": np.ones((2, 2))})
    fix = mutants.repair(source, "", {}, [(malformed, None), (valid, None)], lambda case: None,
                         "f()", raising=[0])
    assert fix is not None
    stage = fix.stages()[0]
    assert (stage["raising"], stage["right"], stage["error"]) == ([0], [1], "ValueError")
    variants = stage["sources"]
    broke = [{"value": None, "raised": "ValueError",
              "where": "exercises/p.py, line 5: return a @ a.T"}, {"value": None, "raised": None}]
    raised = [{"value": None, "raised": "ValueError",
               "where": "exercises/p.py, line 4: raise ValueError('a must be a matrix')"},
              {"value": None, "raised": None}]
    rejects_both = [raised[0], {"value": None, "raised": "ValueError"}]
    assert fix.name([[broke, rejects_both] + [broke] * (len(variants) - 2)]) is None
    named = fix.name([[broke, rejects_both, raised] + [broke] * (len(variants) - 3)])
    assert named is not None and named.startswith("Your f() is right in every failing case once")


def test_two_indices_of_a_subscript_are_swapped_where_they_differ() -> None:
    """Neighbouring indices in the other order, a slip of its own (a row read for a column, the
    labels for the rows); none made where the two are the same expression."""
    source = ("def f(x, rows, y):\n    x[rows, y] -= 1\n    a = x[:, 0]\n"
              "    b = x[..., 1, 2]\n    c = x[rows, rows]\n    return a + b + c\n")
    made = {m.after for m in mutants.mutants(source) if m.operator == "swap_indices"}
    assert made == {"x[y, rows] -= 1", "a = x[0, :]", "b = x[1, ..., 2]", "b = x[..., 2, 1]"}


def test_a_formulas_parentheses_move_only_where_the_value_changes() -> None:
    """Parentheses lost or put around other operands, both ways (a candidate's file gets
    them back); a regrouping that computes the same (`a + (b - c)`, `a * (b / c)`) is no
    slip, and `@` is associative."""
    source = ("def f(a, b, c, n):\n    x = 2 / (a + b)\n    y = a + (b - c)\n"
              "    z = a - b - c\n    w = a * (b / c)\n    v = (a + b) / n ** 2\n"
              "    u = a @ (b @ c)\n    return x + y + z + w + v + u\n")
    made = {m.after for m in mutants.mutants(source) if m.operator == "regrouped"}
    assert made == {"x = 2 / a + b", "z = a - (b - c)", "v = a + b / n ** 2",
                    "v = ((a + b) / n) ** 2"}


def test_a_calls_result_is_thrown_away_and_kept_again() -> None:
    """An update in place written as its out-of-place twin, a statement of its own (the result
    thrown away); in a candidate's file such a statement gets its result kept, in place or
    bound to the name, and a module function's bound to its first argument. Calls made for
    what they do (append, backward) are left alone."""
    source = ("import numpy as np\ndef f(x, b, out):\n    x.div_(b)\n    b.mul(2)\n"
              "    np.clip(x, 0, None)\n    out.append(x)\n    x.backward()\n    return x\n")
    made = {(m.operator, m.after) for m in mutants.mutants(source)
            if m.operator in ("discarded_result", "kept_result")}
    assert made == {("discarded_result", "x.div(b)"), ("kept_result", "b.mul_(2)"),
                    ("kept_result", "b = b.mul(2)"), ("kept_result", "x = np.clip(x, 0, None)")}


def test_a_loop_made_once_and_a_copy_left_out_are_made_both_ways() -> None:
    """`while` written `if` (and, in a candidate's file, an `if` that leaves nothing made a
    loop), a copy left out of a saved slice (and a copy taken of each saved slice or index,
    one at a time and all together)."""
    source = ("def f(g, M, C, shape):\n    while g.ndim > len(shape):\n        g = g.sum(0)\n"
              "    if g.ndim > 3:\n        g = g[0]\n    if g.ndim < 0:\n        return g\n"
              "    a = M.copy()\n    left, right = M[1], C[1:]\n    return g + a + left + right\n")
    made = {(m.operator, m.after) for m in mutants.mutants(source)
            if m.operator in ("if_for_while", "while_for_if", "dropped_copy", "added_copy")}
    assert made == {("if_for_while", "if g.ndim > len(shape):"),
                    ("while_for_if", "while g.ndim > 3:"), ("dropped_copy", "a = M"),
                    ("added_copy", "g = g[0].copy()"),
                    ("added_copy", "left, right = (M[1].copy(), C[1:])"),
                    ("added_copy", "left, right = (M[1], C[1:].copy())"),
                    ("added_copy", "left, right = (M[1].copy(), C[1:].copy())")}


def test_a_torch_transpose_for_one_matrix_and_for_a_stack_are_made_both_ways() -> None:
    """In torch, `.mT` written `.t()` (which raises on a stack of matrices), and `.t()` or `.T`
    made `.mT`; a `.t()` operand is a transpose like the others."""
    source = ("import torch\ndef f(A, B, dC):\n    dA = dC @ B.mT\n    dB = A.t() @ dC\n"
              "    return dA, dB\n")
    made = {(m.operator, m.after) for m in mutants.mutants(source)
            if m.operator in ("matrix_only_transpose", "stack_transpose", "drop_transpose")}
    assert made == {("matrix_only_transpose", "dA = dC @ B.t()"),
                    ("stack_transpose", "dB = A.mT @ dC"),
                    ("drop_transpose", "dA = dC @ B"), ("drop_transpose", "dB = A @ dC")}


def test_a_transpose_misread_at_every_product_is_also_made_at_all_of_them_at_once() -> None:
    """One change leaves the second `.t()` of a batched backward raising: its products are
    also made `.mT` all at once (`every_stack_transpose`, shown as the first site), and in
    numpy `.T` is made `swapaxes(-1, -2)`, alone and everywhere; a lone site makes no
    `every_` variant."""
    torch_source = ("import torch\ndef f(A, B, dC):\n    dA = torch.matmul(dC, B.t())\n"
                    "    dB = A.t() @ dC\n    return dA, dB\n")
    every = [m for m in mutants.mutants(torch_source) if m.operator == "every_stack_transpose"]
    assert [(m.before, m.after) for m in every] == [("dA = torch.matmul(dC, B.t())",
                                                     "dA = torch.matmul(dC, B.mT)")]
    assert every[0].source == ("import torch\ndef f(A, B, dC):\n    dA = torch.matmul(dC, B.mT)\n"
                               "    dB = A.mT @ dC\n    return dA, dB\n")
    numpy_source = ("import numpy as np\ndef f(A, B, dC):\n    dA = dC @ B.T\n"
                    "    dB = np.matmul(A.T, dC)\n    return (dA,\n            dB)\n")
    made = {(m.operator, m.source.split("\n")[2 if m.after.startswith("dA") else 3].strip())
            for m in mutants.mutants(numpy_source) if "stack_transpose" in m.operator}
    assert made == {("stack_transpose", "dA = dC @ B.swapaxes(-1, -2)"),
                    ("stack_transpose", "dB = np.matmul(A.swapaxes(-1, -2), dC)"),
                    ("every_stack_transpose", "dA = dC @ B.swapaxes(-1, -2)")}
    assert "dB = np.matmul(A.swapaxes(-1, -2), dC)" in next(
        m.source for m in mutants.mutants(numpy_source) if m.operator == "every_stack_transpose")
    lone = "import torch\ndef f(A, dC):\n    return dC @ A.t()\n"
    assert not any(m.operator.startswith("every_") for m in mutants.mutants(lone))


def test_a_size_is_read_for_another_unpacked_with_it_but_never_for_an_array() -> None:
    source = ("import numpy as np\ndef f(a, h0):\n    T, D = a.shape\n"
              "    if h0.shape != (T,):\n        raise ValueError('h0')\n    return a * D\n")
    made = {(m.operator, m.after) for m in mutants.mutants(source)
            if m.operator in ("other_size", "other_variable")}
    assert ("other_size", "if h0.shape != (D,):") in made
    assert ("other_size", "return a * T") in made
    assert not any(after.endswith("(a,):") or after == "return a * h0" for _, after in made)


def test_of_changes_to_the_same_lines_the_first_is_merged() -> None:
    """Each site keeps its first alternative (`axis=1` or `axis=-1` for `axis=0`); one site
    alone makes no variant of every site."""
    source = "a = 1\nb = 2\nc = 3\n"
    one, two, same = (mutants.Mutant("x", "", "", text) for text in (
        "a = 1\nb = 5\nc = 3\n", "a = 1\nb = 2\nc = 7\n", "a = 1\nb = 6\nc = 3\n"))
    assert mutants._merged(source, [one, same, two]) == ("a = 1\nb = 5\nc = 7\n", one,
                                                          [one, two])
    assert mutants._merged(source, [one, same]) is None


def _raised(attempt: Any) -> dict[str, str]:
    try:
        attempt()
    except Exception as exc:  # noqa: BLE001 - the exception is the datum
        return {"type": type(exc).__name__, "message": str(exc)}
    raise AssertionError("it did not raise")


def _no_grad_uncalled() -> None:
    import torch

    with torch.no_grad:  # type: ignore[attr-defined]
        pass


def test_the_errors_whose_message_names_the_slip_are_read_from_the_libraries_real_messages(
) -> None:
    """Each entry of errors.toml matches the message torch or numpy really raises here, so a
    library that rewords one fails this test rather than silently losing the hint."""
    import torch

    from grader.checks.kinds import known_error_hint

    said = {
        "float index (torch)": _raised(lambda: torch.zeros(3)[torch.zeros(2)]),
        "float index (numpy)": _raised(lambda: np.zeros(3)[np.zeros(2)]),
        "dtype clash": _raised(lambda: torch.ones(2, 2) @ torch.ones(2, 2, dtype=torch.float64)),
        "context manager": _raised(_no_grad_uncalled),
        "float of an array": _raised(lambda: float(np.ones(3))),
    }
    hints = {what: known_error_hint(raised) for what, raised in said.items()}
    assert all(hints.values()), hints
    assert "integers" in hints["float index (torch)"] == hints["float index (numpy)"]
    assert "float32 against float64" in hints["dtype clash"]
    assert "`with torch.no_grad():`" in hints["context manager"]
    assert "float() or int()" in hints["float of an array"]
    assert known_error_hint({"type": "ValueError", "message": "W must be 3-D"}) is None


@pytest.mark.parametrize(("where", "line", "by_a_raise"), [
    ('exercises/p.py, line 15: raise ValueError("h0")', "15", True),
    ("/tmp/ws/exercises/p.py, line 15: raise ValueError('h0')", "15", True),
    ("exercises/p.py, line 22: logits = h @ W2 + b2", "22", False),
])
def test_a_guard_is_held_at_the_same_line_however_a_variant_spells_it(
        where: str, line: str, by_a_raise: bool) -> None:
    """A variant's changed function is loaded from unparsed text (its quotes not the file's):
    the line a raise names is compared as Python reads it, and a `raise` of the file's own
    holds a guard wherever it is, where a library call that broke on what got through does
    not (a guard left out, and numpy's matmul raising the same ValueError later)."""
    from grader.probes.library import _by_a_raise, _line_of

    assert _line_of({"where": where}).split(":")[0] == line
    assert _by_a_raise({"where": where}) is by_a_raise
    assert _line_of({"where": 'a.py, line 15: raise ValueError("h0")'}) == \
        _line_of({"where": "b.py, line 15: raise ValueError('h0')"})
