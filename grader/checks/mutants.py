"""Differential diagnosis: the likely mistakes, derived from the reference itself.

A candidate's wrong answer is usually the right code with one slip in it. So instead of a list
of known mistakes, the judge makes every one-slip variant (a mutant) of the reference part's
source, with a library of mutation operators over its syntax tree (swap a product's operands,
add or drop a transpose, shift an index or a loop bound by one, overwrite instead of
accumulate, flip a sign, drop a factor, reduce over another axis, run a loop the other way,
swap two steps, drop a step, read another variable, ...). A baseline child (no candidate code)
runs each mutant on the failing cases; the first whose outputs equal the candidate's names the
slip, in a sentence from mutations.toml that shows the statement as the slip makes it and as
the reference has it. A candidate whose code raised on valid input is matched with the mutant
that raises the same exception at a statement of the same shape as the candidate's line.

Everything here is judge-side: mutants are made from the reference and run only in processes
that never hold candidate code.
"""

from __future__ import annotations

import ast
import builtins
import copy
import difflib
import functools
import itertools
import textwrap
import tomllib
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

import numpy as np

from grader.checks.base import Diagnosis, Repair
from grader.checks.cases import Case
from grader.checks.compare import tree_matches
from grader.engine.rounds import Round
from grader.engine.state import regular_file_bytes
from grader.probes.library import MUTANTS_CPU_S, OUT_OF_TIME

TEMPLATES_FILE = Path(__file__).with_name("mutations.toml")
MAX_MUTANTS = 1400
"""Enough for every slip of every part's reference (the longest, a scan or a batchnorm of a few
dozen lines, make about 1250 to 1320, most of them another variable read: at 400 those were cut, and
a slip such as `dy` read for `dxhat` went unnamed); a bound on the child's work should a
round's reference be far longer."""
MAX_CASES = 3
"""Failing cases a mutant is run on at least: small ones, where a slip shows and little else
does (chosen_cases)."""
MAX_STRUCTURES = 8
"""Failing cases of different structures a mutant is run on at most (chosen_cases): inputs of
every batch rank, say, each small, so a few dozen calls more per mutant."""


@dataclass(frozen=True)
class Mutant:
    """One slip applied to the reference: which operator, the statement before and after it as
    a hint shows them (cut to SHOWN characters), the whole mutated source, the statements
    (besides the one it changed) where the slip shows as a raise (see Edit.explains), and the
    first line of the statement before and after it in full (what by_evidence looks for in the
    candidate's file)."""

    operator: str
    before: str
    after: str
    source: str
    explains: tuple[str, ...] = ()
    line_before: str = ""
    line_after: str = ""


@dataclass(frozen=True)
class Edit:
    """What an operator proposes at one node: the node's replacement (a list of statements
    for a step-level slip, in place of the step and, for a swap, the one after it), and the
    statements whose raise it explains besides its own (the steps a context manager that is
    no longer entered governed)."""

    operator: str
    replacement: ast.AST | list[ast.stmt]
    explains: tuple[str, ...] = ()


Operator = Callable[[ast.AST, "Scope"], Iterator[Edit]]


@dataclass(frozen=True)
class Scope:
    """What an operator may know about where a node sits: the names the enclosing function
    binds (its parameters and assigned variables), for operators that read another one, the
    name the module imports its array library under (`np`, `torch`), for operators that call
    one of its functions (None where it imports neither), the members the function reads
    from each of its names (_read_members), for operators that read a sibling, and the
    functions and classes the module defines, whose arguments (a class's: its methods')
    an operator may pass in another order, and the names the function assigns more than once
    (a running total set up, then added to), where an overwrite may be an accumulation, and
    the sizes it unpacks together (`T, D = a.shape`), for the operator that reads another."""

    names: tuple[str, ...]
    arrays: str | None
    members: dict[tuple[str, str], tuple[str, ...]]
    defined: frozenset[str] = frozenset()
    reassigned: frozenset[str] = frozenset()
    sizes: tuple[tuple[str, ...], ...] = ()


def _expr(text: str) -> ast.expr:
    return ast.parse(text, mode="eval").body


def _is_transpose(node: ast.AST) -> ast.expr | None:
    """The operand of a last-two-axes transpose (`x.T`, `x.mT`, `x.transpose(-1, -2)`,
    `x.swapaxes(-1, -2)`, `x.transpose(1, 2)` on a stack..., and the module functions
    `np.swapaxes(x, -1, -2)`, `torch.transpose(x, -2, -1)`), else None."""
    if isinstance(node, ast.Attribute) and node.attr in ("T", "mT"):
        return node.value
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
            and node.func.attr == "t" and not node.args and not node.keywords:
        return node.func.value
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
            and node.func.attr in ("transpose", "swapaxes", "permute") and not node.keywords:
        owner = node.func.value
        if isinstance(owner, ast.Name) and owner.id in ARRAY_MODULES:
            return node.args[0] if node.args else None
        return owner
    return None


ARRAY_MODULES = frozenset({"np", "numpy", "torch"})
"""The names under which a file calls the array libraries' module functions (`np.swapaxes(x,
-1, -2)`), whose first argument is the array."""


def _transposed(node: ast.expr) -> ast.expr:
    """`node` with its last two axes swapped, in a spelling numpy arrays and torch tensors both
    accept."""
    return ast.Call(ast.Attribute(copy.deepcopy(node), "swapaxes", ast.Load()),
                    [ast.Constant(-1), ast.Constant(-2)], [])


PRODUCTS = ("matmul", "mm", "bmm", "dot", "baddbmm", "baddbmm_", "addmm", "addmm_", "addbmm",
            "addbmm_")
"""Calls whose last two positional arguments are a matrix product's operands (`x.baddbmm_(A,
B)` adds A @ B into x)."""


def matmul_operands(node: ast.AST, scope: Scope) -> Iterator[Edit]:
    """Products (`A @ B`, and the calls in PRODUCTS): operands swapped; an operand transposed,
    or its transpose dropped, or a last-two-axes transpose written `.T` (which reverses every
    axis of a stack) or as one of the first two axes (`transpose(0, 1)`, numpy's
    `swapaxes(0, 1)`: the same on a matrix, not on a stack)."""
    numpy = scope.arrays != "torch"
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.MatMult):
        yield from _product_edits(node.left, node.right,
                                  lambda a, b: ast.BinOp(a, ast.MatMult(), b), numpy)
    elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
            and node.func.attr in PRODUCTS and len(node.args) >= 2:
        head = node.args[:-2]
        yield from _product_edits(node.args[-2], node.args[-1], lambda a, b: ast.Call(
            node.func, [*head, a, b], node.keywords), numpy)


def _product_edits(left: ast.expr, right: ast.expr, make: Callable[[ast.expr, ast.expr], ast.AST],
                   numpy: bool) -> Iterator[Edit]:
    yield Edit("swap_operands", make(right, left))
    for side, operand in enumerate((left, right)):
        def with_operand(new: ast.expr, side: int = side) -> ast.AST:
            return make(new, right) if side == 0 else make(left, new)

        inner = _is_transpose(operand)
        if inner is None:
            yield Edit("add_transpose", with_operand(_transposed(operand)))
            continue
        yield Edit("drop_transpose", with_operand(inner))
        if not (isinstance(operand, ast.Attribute) and operand.attr == "T"):
            yield Edit("full_transpose", with_operand(ast.Attribute(inner, "T", ast.Load())))
        if not numpy:  # torch: `.t()` takes 2-D tensors alone; `.mT` swaps a stack's last two
            if not (isinstance(operand, ast.Call) and _called(operand) == "t"):
                yield Edit("matrix_only_transpose", with_operand(ast.Call(
                    ast.Attribute(inner, "t", ast.Load()), [], [])))
            if not (isinstance(operand, ast.Attribute) and operand.attr == "mT"):
                yield Edit("stack_transpose", with_operand(ast.Attribute(inner, "mT",
                                                                         ast.Load())))
        elif ast.unparse(operand) != ast.unparse(_transposed(inner)):
            yield Edit("stack_transpose", with_operand(_transposed(inner)))
        yield Edit("leading_transpose", with_operand(ast.Call(
            ast.Attribute(inner, "swapaxes" if numpy else "transpose", ast.Load()),
            [ast.Constant(0), ast.Constant(1)], [])))


def _shifted(node: ast.expr, by: int) -> ast.expr:
    """`node + by`, folding into a constant or an existing `x + k` / `x - k`."""
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub) \
            and isinstance(node.operand, ast.Constant) \
            and isinstance(node.operand.value, int | float | complex):
        node = ast.Constant(-node.operand.value)
    if isinstance(node, ast.Constant) and isinstance(node.value, int) \
            and not isinstance(node.value, bool):
        return ast.Constant(node.value + by)
    if isinstance(node, ast.BinOp) and isinstance(node.right, ast.Constant) \
            and isinstance(node.right.value, int) and isinstance(node.op, ast.Add | ast.Sub):
        k = node.right.value if isinstance(node.op, ast.Add) else -node.right.value
        total = k + by
        if total == 0:
            return node.left
        return ast.BinOp(node.left, ast.Add() if total > 0 else ast.Sub(),
                         ast.Constant(abs(total)))
    return ast.BinOp(node, ast.Add() if by > 0 else ast.Sub(), ast.Constant(abs(by)))


def _index_like(node: ast.AST) -> bool:
    """An index worth shifting: a name, or a name plus or minus a whole number."""
    if isinstance(node, ast.Name):
        return True
    return isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add | ast.Sub) \
        and isinstance(node.left, ast.Name) and isinstance(node.right, ast.Constant) \
        and isinstance(node.right.value, int)


def off_by_one(node: ast.AST, scope: Scope) -> Iterator[Edit]:
    """An index, a slice bound (in brackets or in a `slice(...)` call) or a range bound one
    too high or too low (a bound a statement repeats, everywhere in it at once too; `range(1,
    n)` for `range(n)`: the first step skipped); a whole range one step late or early
    (`range(1, n + 1)` for `range(n)`: counting from one); a slice taken from the other
    end."""
    if isinstance(node, ast.Subscript):
        index = node.slice
        parts = index.elts if isinstance(index, ast.Tuple) else [index]
        for position, part in enumerate(parts):
            if _index_like(part):
                for by in (-1, 1):
                    yield Edit("shift_index", _with_part(node, position, _shifted(part, by)))
            elif isinstance(part, ast.Slice):
                other = _other_end(part)
                if other is not None:
                    yield Edit("other_end", _with_part(node, position, other))
                for bound in ("lower", "upper"):
                    value = getattr(part, bound)
                    if value is None:
                        continue
                    for by in (-1, 1):
                        moved = copy.copy(part)
                        setattr(moved, bound, _shifted(value, by))
                        yield Edit("shift_bound", _with_part(node, position, moved))
    elif isinstance(node, ast.Assign | ast.AugAssign):
        yield from _shifted_together(node)
    elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) \
            and node.func.id == "slice" and not node.keywords:
        for position, end in enumerate(node.args[:2]):
            if not (isinstance(end, ast.Constant) and end.value is None):
                for by in (-1, 1):
                    args = list(node.args)
                    args[position] = _shifted(end, by)
                    yield Edit("shift_bound", ast.Call(node.func, args, []))
    elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) \
            and node.func.id == "range" and not node.keywords:
        for position in range(min(len(node.args), 2)):
            for by in (-1, 1):
                args = list(node.args)
                args[position] = _shifted(args[position], by)
                yield Edit("shift_bound", ast.Call(node.func, args, []))
        if len(node.args) == 1:
            yield Edit("shift_bound", ast.Call(node.func, [ast.Constant(1), node.args[0]], []))
            yield Edit("shift_range", ast.Call(node.func, [ast.Constant(1),
                                                           _shifted(node.args[0], 1)], []))
        elif len(node.args) == 2:
            for by in (-1, 1):
                yield Edit("shift_range", ast.Call(node.func, [_shifted(a, by) for a in node.args],
                                                   []))


def _shifted_together(statement: ast.Assign | ast.AugAssign) -> Iterator[Edit]:
    """A slice bound that a statement writes more than once (`new[:step] = old[:step]`) one
    too high or too low everywhere in it at once: the slip of a hand that wrote the bound
    wrong once and copied it."""
    bounds = [ast.dump(value) for part in ast.walk(statement) if isinstance(part, ast.Slice)
              for value in (part.lower, part.upper) if value is not None]
    for repeated in sorted({b for b in bounds if bounds.count(b) > 1}):
        for by in (-1, 1):
            moved = copy.deepcopy(statement)
            for part in ast.walk(moved):
                if isinstance(part, ast.Slice):
                    for bound in ("lower", "upper"):
                        value = getattr(part, bound)
                        if value is not None and ast.dump(value) == repeated:
                            setattr(part, bound, _shifted(value, by))
            yield Edit("shift_bound", moved)


def _other_end(part: ast.Slice) -> ast.Slice | None:
    """`x[1:]` for `x[:-1]` and back: as many slots, from the other end (the states after each
    step for the states before it)."""
    if part.step is not None or (part.lower is None) == (part.upper is None):
        return None
    if part.lower is not None:
        return ast.Slice(None, ast.UnaryOp(ast.USub(), part.lower), None)
    bound = part.upper
    if isinstance(bound, ast.UnaryOp) and isinstance(bound.op, ast.USub):
        return ast.Slice(bound.operand, None, None)
    if isinstance(bound, ast.Constant) and isinstance(bound.value, int) and bound.value < 0:
        return ast.Slice(ast.Constant(-bound.value), None, None)
    return None


def _with_part(node: ast.Subscript, position: int, part: ast.expr) -> ast.Subscript:
    changed = copy.copy(node)
    if isinstance(node.slice, ast.Tuple):
        elts = list(node.slice.elts)
        elts[position] = part
        changed.slice = ast.Tuple(elts, ast.Load())
    else:
        changed.slice = part
    return changed


def accumulation(node: ast.AST, scope: Scope) -> Iterator[Edit]:
    """Overwriting where the reference accumulates, and accumulating where it overwrites (a
    slot, or a name the function sets more than once: a total set up and then overwritten);
    an update in place made a new array bound to the name (`x = x * y` for `x *= y`,
    `x = x.mul(y)` for `x.mul_(y)`), which differs wherever another name shares the array:
    the write no longer reaches it. Tried in a candidate's file, the same change repairs an
    update that should not have reached an alias (`da = g; db = g; da *= h` scales db too)."""
    if isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name):
        name = node.target.id
        yield Edit("out_of_place", ast.Assign([ast.Name(name, ast.Store())],
                                              ast.BinOp(ast.Name(name, ast.Load()), node.op,
                                                        node.value)))
    elif isinstance(node, ast.Expr) and isinstance(call := node.value, ast.Call) \
            and isinstance(call.func, ast.Attribute) and isinstance(call.func.value, ast.Name) \
            and call.func.attr in IN_PLACE:
        name = call.func.value.id
        yield Edit("out_of_place", ast.Assign([ast.Name(name, ast.Store())], ast.Call(
            ast.Attribute(ast.Name(name, ast.Load()), call.func.attr[:-1], ast.Load()),
            call.args, call.keywords)))
    if isinstance(node, ast.AugAssign) and isinstance(node.op, ast.Add | ast.Sub):
        yield Edit("assign_for_accumulate", ast.Assign([node.target], node.value))
    elif isinstance(node, ast.Assign) and len(node.targets) == 1:
        target, value = node.targets[0], node.value
        if isinstance(value, ast.BinOp) and isinstance(value.op, ast.Add) \
                and ast.dump(value.left) == ast.dump(_as_load(target)):
            yield Edit("assign_for_accumulate", ast.Assign([target], value.right))
        elif isinstance(target, ast.Subscript) or isinstance(target, ast.Name) \
                and target.id in scope.reassigned:
            yield Edit("accumulate_for_assign", ast.AugAssign(target, ast.Add(), value))


IN_PLACE = ("add_", "sub_", "mul_", "div_", "neg_", "clamp_", "pow_", "sqrt_", "exp_",
            "masked_fill_", "addmm_", "baddbmm_")
"""torch's in-place methods whose out-of-place twin is the same name without the underscore."""

SIDE_EFFECTS = frozenset({"append", "extend", "insert", "update", "pop", "remove", "clear",
                          "sort", "fill", "resize", "put", "itemset", "setflags", "setdefault",
                          "backward", "step", "zero_grad", "write", "add", "discard", "copyto",
                          "register_hook", "retain_grad", "warn", "seed", "manual_seed",
                          "set_printoptions", "fill_diagonal", "add_at", "put_along_axis"})
"""Methods and functions called for what they do, not what they return: a statement of their
own is their use."""


def discarded(node: ast.AST, scope: Scope) -> Iterator[Edit]:
    """A call whose result is thrown away where it should be kept: `x.div_(b)` written
    `x.div(b)`, a statement of its own that makes a new tensor and leaves x as it was; tried
    in a candidate's file, such a statement with its result kept (`x.div_(b)`, `x = x.div(b)`,
    `x = np.clip(x, 0, None)` for `np.clip(x, 0, None)`)."""
    if not (isinstance(node, ast.Expr) and isinstance(call := node.value, ast.Call)
            and isinstance(func := call.func, ast.Attribute)
            and isinstance(owner := func.value, ast.Name)):
        return
    if owner.id in scope.names:
        if func.attr in IN_PLACE:
            yield Edit("discarded_result", ast.Expr(ast.Call(
                ast.Attribute(owner, func.attr[:-1], ast.Load()), call.args, call.keywords)))
        elif not func.attr.endswith("_") and func.attr not in SIDE_EFFECTS:
            if func.attr + "_" in IN_PLACE:
                yield Edit("kept_result", ast.Expr(ast.Call(
                    ast.Attribute(owner, func.attr + "_", ast.Load()), call.args,
                    call.keywords)))
            yield Edit("kept_result", ast.Assign([ast.Name(owner.id, ast.Store())], call))
    elif owner.id in ARRAY_MODULES and call.args and isinstance(first := call.args[0], ast.Name) \
            and first.id in scope.names and func.attr not in SIDE_EFFECTS:
        yield Edit("kept_result", ast.Assign([ast.Name(first.id, ast.Store())], call))


def _as_load(node: ast.expr) -> ast.expr:
    copied = copy.deepcopy(node)
    for child in ast.walk(copied):
        if hasattr(child, "ctx"):
            child.ctx = ast.Load()
    return copied


def arithmetic(node: ast.AST, scope: Scope) -> Iterator[Edit]:
    """A sign flipped (`+` for `-` and back, a negation dropped); a product for a quotient (and
    back) by a variable; a constant factor or divisor dropped, doubled (`size // 4` for
    `size // 2`) or, where even, halved; a floor division for a true one and back
    (_division); a number passed to a call with its sign flipped (`np.roll(x, -1)` for
    `np.roll(x, 1)`; an axis is dimensions' and reductions'). `x + 1` and `x - 1` are an
    index's arithmetic, which off_by_one shifts instead."""
    if isinstance(node, ast.BinOp) and not (isinstance(node.right, ast.Constant)
                                            and isinstance(node.op, ast.Add | ast.Sub)):
        if isinstance(node.op, ast.Add):
            yield Edit("flip_sign", ast.BinOp(node.left, ast.Sub(), node.right))
        elif isinstance(node.op, ast.Sub):
            yield Edit("flip_sign", ast.BinOp(node.left, ast.Add(), node.right))
        if isinstance(node.op, ast.Mult | ast.Div) and not isinstance(node.right, ast.Constant):
            inverse = ast.Div() if isinstance(node.op, ast.Mult) else ast.Mult()
            yield Edit("inverted_operator", ast.BinOp(node.left, inverse, node.right))
        if isinstance(node.op, ast.Mult | ast.Div | ast.FloorDiv):
            pairs = ((node.left, node.right), (node.right, node.left))
            for kept, factor in pairs[:1] if isinstance(node.op, ast.FloorDiv) else pairs:
                if isinstance(factor, ast.Constant) and isinstance(factor.value, int | float) \
                        and factor.value not in (0, 1):
                    yield Edit("drop_factor", kept)
                    yield Edit("double_factor", _with_factor(node, factor, factor.value * 2))
                    if factor.value % 2 == 0:
                        half = factor.value // 2 if isinstance(factor.value, int) \
                            else factor.value / 2
                        yield Edit("halve_factor", _with_factor(node, factor, half))
    elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub) \
            and not isinstance(node.operand, ast.Constant):
        yield Edit("flip_sign", node.operand)
    elif isinstance(node, ast.AugAssign) and isinstance(node.op, ast.Add | ast.Sub):
        flipped = ast.Sub() if isinstance(node.op, ast.Add) else ast.Add()
        yield Edit("flip_sign", ast.AugAssign(node.target, flipped, node.value))
    yield from _division(node)
    yield from _signed_arguments(node)


AXIS_KEYWORDS = frozenset({"axis", "dim", "axes", "dims"})


def _signed_arguments(node: ast.AST) -> Iterator[Edit]:
    """Each number a call is given (`-1`, `2`, not 0 and no axis), with its sign flipped: a
    shift, a step or a scale the wrong way."""
    if not isinstance(node, ast.Call):
        return
    for position, argument in enumerate(node.args):
        flipped = _negated(argument)
        if flipped is not None:
            args = [*node.args[:position], flipped, *node.args[position + 1:]]
            yield Edit("flip_sign", ast.Call(node.func, args, node.keywords))
    for position, keyword in enumerate(node.keywords):
        flipped = _negated(keyword.value)
        if flipped is not None and keyword.arg not in AXIS_KEYWORDS:
            keywords = list(node.keywords)
            keywords[position] = ast.keyword(arg=keyword.arg, value=flipped)
            yield Edit("flip_sign", ast.Call(node.func, node.args, keywords))


def _negated(node: ast.expr) -> ast.expr | None:
    """A number written in the source with the other sign (`-1` for `1` and back); None for
    anything else, and for 0."""
    value = _int_constant(node)
    if value is None and isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub) \
            and isinstance(node.operand, ast.Constant) and type(node.operand.value) is float:
        return node.operand
    if value is None and isinstance(node, ast.Constant) and type(node.value) is float \
            and node.value:
        return ast.UnaryOp(ast.USub(), ast.Constant(node.value))
    if not value:
        return None
    return ast.Constant(-value) if value < 0 else ast.UnaryOp(ast.USub(), ast.Constant(value))


def _with_factor(node: ast.BinOp, factor: ast.Constant, value: float) -> ast.BinOp:
    """`node` with its constant operand `factor` (its left or its right) made `value`."""
    made = copy.copy(node)
    if factor is node.left:
        made.left = ast.Constant(value)
    else:
        made.right = ast.Constant(value)
    return made


def _division(node: ast.AST) -> Iterator[Edit]:
    """A true division for a floor division and back (`/` for `//`, `//=` for `/=`): a float
    index or count, or a quotient rounded down to whole numbers."""
    if isinstance(node, ast.BinOp | ast.AugAssign) and isinstance(node.op, ast.Div | ast.FloorDiv):
        floor = isinstance(node.op, ast.Div)
        other: ast.operator = ast.FloorDiv() if floor else ast.Div()
        made = ast.BinOp(node.left, other, node.right) if isinstance(node, ast.BinOp) \
            else ast.AugAssign(node.target, other, node.value)
        yield Edit("floor_division" if floor else "true_division", made)


def left_out(node: ast.AST, scope: Scope) -> Iterator[Edit]:
    """Half of a formula forgotten: a term of a sum (`a - b - c` written `a - b`), a factor or
    a divisor that is a variable (`dx / std` written `dx`; a constant one is drop_factor's), a
    difference or a ratio the wrong way round (`minus - plus`, `(n - 1) / n`). Index
    arithmetic (`i + 1`) is off_by_one's."""
    if not isinstance(node, ast.BinOp) or isinstance(node.right, ast.Constant):
        return
    if isinstance(node.op, ast.Add | ast.Sub):
        yield Edit("drop_term", node.left)
        if isinstance(node.op, ast.Add):
            yield Edit("drop_term", node.right)
        elif not isinstance(node.left, ast.Constant):
            yield Edit("reverse_difference", ast.BinOp(node.right, ast.Sub(), node.left))
    elif isinstance(node.op, ast.Mult | ast.Div) and not isinstance(node.left, ast.Constant):
        yield Edit("drop_operand", node.left)
        if isinstance(node.op, ast.Mult):
            yield Edit("drop_operand", node.right)
        else:
            yield Edit("reverse_ratio", ast.BinOp(node.right, ast.Div(), node.left))


REGROUPED = (ast.Add, ast.Sub, ast.Mult, ast.Div, ast.FloorDiv, ast.Pow)
"""The operators whose grouping a hurried hand gets wrong (`@` is associative, and binds as
`*` does)."""
SAME_GROUPING = {(ast.Add, ast.Add), (ast.Add, ast.Sub), (ast.Mult, ast.Mult),
                 (ast.Mult, ast.Div)}
"""(outer, inner) pairs whose regrouping computes the same value: `a + (b - c)` is
`(a + b) - c`."""


def groupings(node: ast.AST, scope: Scope) -> Iterator[Edit]:
    """Parentheses lost, or put around the wrong operands: `2 / (fan_in + fan_out)` written
    `2 / fan_in + fan_out`, `(x - mean) / std` written `x - mean / std`, `a - (b - c)` written
    `a - b - c`; tried in a candidate's file, the same regrouping the other way puts them
    back. Only where the value changes (see SAME_GROUPING)."""
    if not isinstance(node, ast.BinOp) or not isinstance(node.op, REGROUPED):
        return
    right, left = node.right, node.left
    if isinstance(right, ast.BinOp) and isinstance(right.op, REGROUPED) \
            and (type(node.op), type(right.op)) not in SAME_GROUPING:
        yield Edit("regrouped", ast.BinOp(ast.BinOp(left, node.op, right.left), right.op,
                                          right.right))
    if isinstance(left, ast.BinOp) and isinstance(left.op, REGROUPED) \
            and (type(left.op), type(node.op)) not in SAME_GROUPING:
        yield Edit("regrouped", ast.BinOp(left.left, left.op,
                                          ast.BinOp(left.right, node.op, right)))


def conditions(node: ast.AST, scope: Scope) -> Iterator[Edit]:
    """One of the conditions a test joins with `and` or `or` left out: `if training and n < 2`
    written `if n < 2`, which rejects a batch of one in evaluation too."""
    if isinstance(node, ast.BoolOp) and len(node.values) >= 2:
        for i in range(len(node.values)):
            kept = node.values[:i] + node.values[i + 1:]
            yield Edit("drop_condition", kept[0] if len(kept) == 1
                       else ast.BoolOp(node.op, kept))


ELEMENTWISE = ("sqrt", "abs", "exp", "log", "square", "rsqrt", "relu", "tanh", "sigmoid")
"""Functions of one array, entry by entry, whose call a hurried hand moves across a function of
two (`max(|a|, |b|)` written `|max(a, b)|`, `|a - b|` written `|a| - |b|`, moved_calls)."""
UNARY = (*ELEMENTWISE, "maximum", "minimum", "clamp", "clip")
"""Functions of one array (a clamp's bound aside) whose call a hurried hand leaves out:
`std = variance` for `std = np.sqrt(variance)`, `a - b` for `np.abs(a - b)`."""
EXTREMES = {"max": "min", "min": "max", "maximum": "minimum", "minimum": "maximum",
            "amax": "amin", "amin": "amax", "argmax": "argmin", "argmin": "argmax",
            "nanmax": "nanmin", "nanmin": "nanmax"}


def calls(node: ast.AST, scope: Scope) -> Iterator[Edit]:
    """A function of UNARY left out (`np.sqrt(x)`, `math.sqrt(x)`, `x.sqrt()`, `abs(x)` and
    `np.maximum(x, 0)` all become `x`); the smallest taken for the largest and back (`np.min`
    for `np.max`, `min(...)` for `max(...)`, `torch.minimum` for `torch.maximum`); two
    neighbouring arguments of a call to one of the module's own functions or classes in each
    other's places (`combine(step, prefix)` for `combine(prefix, step)`, `Scan.apply(b, a)`
    for `Scan.apply(a, b)`); a bound given by keyword on the other side (`x.clamp(max=tiny)`
    for `x.clamp(min=tiny)`); two methods of a chain called in the other order
    (`x.mean().pow(2)` for `x.pow(2).mean()`)."""
    if not isinstance(node, ast.Call):
        return
    func = node.func
    called = _called(node)
    if called in UNARY:
        if node.args and not isinstance(node.args[0], ast.Starred):
            yield Edit("drop_call", node.args[0])
        elif not node.args and isinstance(func, ast.Attribute):
            yield Edit("drop_call", func.value)
    if called in EXTREMES:
        other = ast.Attribute(func.value, EXTREMES[called], ast.Load()) \
            if isinstance(func, ast.Attribute) else ast.Name(EXTREMES[called], ast.Load())
        yield Edit("opposite_extreme", ast.Call(other, node.args, node.keywords))
    bounds = [k for k in node.keywords if k.arg in EXTREMES]
    if len(bounds) == 1:  # clamp(min=...) for clamp(max=...) and back; both given: a swap
        (bound,) = bounds
        other_bound = ast.keyword(EXTREMES[str(bound.arg)], bound.value)
        yield Edit("opposite_extreme", ast.Call(func, node.args, [
            other_bound if k is bound else k for k in node.keywords]))
    own = isinstance(func, ast.Name) and called in scope.defined or \
        isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) \
        and func.value.id in scope.defined
    if own and not any(isinstance(a, ast.Starred) for a in node.args):
        for i in range(len(node.args) - 1):
            if ast.dump(node.args[i]) != ast.dump(node.args[i + 1]):
                swapped = [*node.args[:i], node.args[i + 1], node.args[i], *node.args[i + 2:]]
                yield Edit("swap_arguments", ast.Call(func, swapped, node.keywords))
    if isinstance(func, ast.Attribute) and isinstance(inner := func.value, ast.Call) \
            and isinstance(inner.func, ast.Attribute) and inner.func.attr != func.attr \
            and _a_value(inner.func.value, scope):
        first = ast.Call(ast.Attribute(inner.func.value, func.attr, ast.Load()), node.args,
                         node.keywords)
        yield Edit("swap_calls", ast.Call(ast.Attribute(first, inner.func.attr, ast.Load()),
                                          inner.args, inner.keywords))


REVERSALS = ("flip", "flipud", "fliplr")
"""What reverses an array's order along an axis, as a method (`x.flip(0)`) or a function of the
library (`np.flip(x, 0)`, `torch.flip(x, (0,))`)."""


def reversals(node: ast.AST, scope: Scope) -> Iterator[Edit]:
    """An array left in its own order where it should be reversed: `dh` for `dh.flip(0)`,
    `np.flip(dh, 0)` or `dh[::-1]` (a backward scan's coefficients reversed and its upstream
    gradients not)."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
            and node.func.attr in REVERSALS:
        if _a_value(node.func.value, scope):
            yield Edit("unreversed", node.func.value)
        elif node.args and not isinstance(node.args[0], ast.Starred):
            yield Edit("unreversed", node.args[0])
    elif isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Slice) \
            and node.slice.lower is None and node.slice.upper is None \
            and node.slice.step is not None and _int_constant(node.slice.step) == -1:
        yield Edit("unreversed", node.value)


JOINS = ("concatenate", "cat", "concat", "stack", "hstack", "vstack", "column_stack")
"""Functions that join arrays in the order given."""


def joins(node: ast.AST, scope: Scope) -> Iterator[Edit]:
    """Two pieces joined in the wrong order: sequences added (`shape + (1,) * k` for `(1,) * k
    + shape`: `+` on tuples and lists does not commute) or neighbouring arrays of a
    concatenation or a stack (`np.concatenate([b, a])`); and joined along the wrong axis, a
    concatenation for a stack and back (_other_join)."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add) \
            and (_sequence(node.left) or _sequence(node.right)):
        yield Edit("swap_joined", ast.BinOp(node.right, ast.Add(), node.left))
    elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute | ast.Name) \
            and (node.func.attr if isinstance(node.func, ast.Attribute) else node.func.id) \
            in JOINS and node.args and isinstance(node.args[0], ast.List | ast.Tuple):
        pieces = node.args[0].elts
        for i in range(len(pieces) - 1):
            if ast.dump(pieces[i]) != ast.dump(pieces[i + 1]) \
                    and not any(isinstance(p, ast.Starred) for p in pieces[i:i + 2]):
                swapped = [*pieces[:i], pieces[i + 1], pieces[i], *pieces[i + 2:]]
                joined = type(node.args[0])(swapped, ast.Load())
                yield Edit("swap_joined", ast.Call(node.func, [joined, *node.args[1:]],
                                                   node.keywords))
    other = _other_join(node)
    if other is not None:
        yield Edit("other_join", other)


def _other_join(node: ast.AST) -> ast.Call | None:
    """A stack for a concatenation and back (`torch.cat(out)` for `torch.stack(out)`): one joins
    along an axis the pieces have, the other along a new one."""
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
            and isinstance(node.func.value, ast.Name) and node.func.value.id in ARRAY_MODULES):
        return None
    torch = node.func.value.id == "torch"
    other = {"cat": "stack", "concat": "stack", "concatenate": "stack",
             "stack": "cat" if torch else "concatenate"}.get(node.func.attr)
    if other is None:
        return None
    return ast.Call(ast.Attribute(node.func.value, other, ast.Load()), node.args, node.keywords)


def _sequence(node: ast.expr) -> bool:
    """A tuple or list written out, or one repeated (`(1,) * k`)."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult):
        return _sequence(node.left) or _sequence(node.right)
    return isinstance(node, ast.Tuple | ast.List)


def _elementwise(node: ast.AST) -> tuple[Callable[[ast.expr], ast.expr], ast.expr] | None:
    """(the call made again around another operand, its operand) where `node` calls one of
    ELEMENTWISE on one array (`np.abs(x)`, `x.abs()`, `abs(x)`); None otherwise."""
    if not isinstance(node, ast.Call) or node.keywords:
        return None
    func = node.func
    if isinstance(func, ast.Attribute) and func.attr in ELEMENTWISE and not node.args:
        attr = func.attr
        return (lambda operand: ast.Call(ast.Attribute(operand, attr, ast.Load()), [], [])), \
            func.value
    if _called(node) in ELEMENTWISE and len(node.args) == 1 \
            and not isinstance(node.args[0], ast.Starred):
        return (lambda operand: ast.Call(func, [operand], [])), node.args[0]
    return None


def _two_operands(node: ast.AST) -> tuple[Callable[[ast.expr, ast.expr], ast.expr],
                                          ast.expr, ast.expr] | None:
    """(the operation made again on other operands, its two operands) where `node` is an
    arithmetic operation or a call of two positional arguments (`torch.maximum(a, b)`)."""
    if isinstance(node, ast.BinOp):
        op = node.op
        return (lambda a, b: ast.BinOp(a, op, b)), node.left, node.right
    if isinstance(node, ast.Call) and len(node.args) == 2 and not node.keywords \
            and not any(isinstance(a, ast.Starred) for a in node.args):
        func = node.func
        return (lambda a, b: ast.Call(func, [a, b], [])), node.args[0], node.args[1]
    return None


def moved_calls(node: ast.AST, scope: Scope) -> Iterator[Edit]:
    """A function of one array moved across an operation of two: taken of the result where
    it belongs to each operand (`torch.maximum(a, b).abs()` for `torch.maximum(a.abs(),
    b.abs())`), or of each operand where it belongs to the result (`np.abs(a) - np.abs(b)`
    for `np.abs(a - b)`)."""
    pair = _two_operands(node)
    if pair is not None:
        remake, left, right = pair
        inner = _elementwise(left), _elementwise(right)
        if inner[0] and inner[1]:
            (wrap, a), (other, b) = inner[0], inner[1]
            placeholder = ast.Name("_", ast.Load())
            if ast.dump(wrap(placeholder)) == ast.dump(other(placeholder)):
                yield Edit("moved_call", wrap(remake(a, b)))
    outer = _elementwise(node)
    if outer is not None:
        wrap, operand = outer
        inside = _two_operands(operand)
        if inside is not None:
            remake, a, b = inside
            yield Edit("moved_call", remake(wrap(a), wrap(b)))


def _a_value(node: ast.expr, scope: Scope) -> bool:
    """Whether `node` is a value whose methods a chain calls (a variable the function binds,
    or what an expression made), not a module whose functions it calls (`torch.where`)."""
    return not isinstance(node, ast.Name) or node.id in scope.names


def results(node: ast.AST, scope: Scope) -> Iterator[Edit]:
    """A returned result negated, and two results returned in each other's places (`return
    dB, dA`)."""
    if not isinstance(node, ast.Return) or node.value is None:
        return
    value = node.value
    elements = value.elts if isinstance(value, ast.Tuple) else [value]
    for i, element in enumerate(elements):
        if isinstance(element, ast.Constant | ast.Dict | ast.List | ast.Tuple):
            continue
        negated = [*elements[:i], ast.UnaryOp(ast.USub(), element), *elements[i + 1:]]
        yield Edit("flip_sign", ast.Return(ast.Tuple(negated, ast.Load())
                                           if isinstance(value, ast.Tuple) else negated[0]))
    for i in range(len(elements) - 1):
        if ast.dump(elements[i]) != ast.dump(elements[i + 1]):
            swapped = [*elements[:i], elements[i + 1], elements[i], *elements[i + 2:]]
            yield Edit("swap_results", ast.Return(ast.Tuple(swapped, ast.Load())))


REDUCTIONS = ("sum", "mean", "max", "min", "prod", "amax", "amin", "logsumexp", "softmax",
              "log_softmax", "norm", "var", "std", "argmax", "argmin", "cumsum", "cumprod")


SHAPE_KEEPING = frozenset({"softmax", "log_softmax", "cumsum", "cumprod"})
"""The REDUCTIONS that keep every axis: none to reduce over every axis, none to keep."""


def reductions(node: ast.AST, scope: Scope) -> Iterator[Edit]:
    """A sum for a mean and back; a reduction over another axis (given by keyword or by
    position), over every axis, with its kept dimension dropped, or with the axis it drops
    kept."""
    yield from _loss_reduction(node)
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
            and node.func.attr in REDUCTIONS):
        return
    other = {"sum": "mean", "mean": "sum"}.get(node.func.attr)
    if other:
        yield Edit("sum_for_mean" if other == "sum" else "mean_for_sum",
                   ast.Call(ast.Attribute(node.func.value, other, ast.Load()), node.args,
                            node.keywords))
    yield from _positional_axis(node)
    for position, keyword in enumerate(node.keywords):
        if keyword.arg in ("axis", "dim"):
            value = _int_constant(keyword.value)
            if value is None:
                continue
            for axis in sorted({0, 1, -1, -2} - {value}):
                keywords = list(node.keywords)
                keywords[position] = ast.keyword(arg=keyword.arg, value=ast.Constant(axis))
                yield Edit("wrong_axis", ast.Call(node.func, node.args, keywords))
            if node.func.attr not in SHAPE_KEEPING:
                keywords = [k for k in node.keywords if k.arg not in ("axis", "dim",
                                                                         "keepdims", "keepdim")]
                yield Edit("every_axis", ast.Call(node.func, node.args, keywords))
        elif keyword.arg in ("keepdims", "keepdim") and isinstance(keyword.value, ast.Constant) \
                and keyword.value.value is True:
            keywords = [k for k in node.keywords if k is not keyword]
            yield Edit("drop_keepdims", ast.Call(node.func, node.args, keywords))
    keeps = _keeps_dimension(node, scope)
    if keeps is not None:
        yield Edit("add_keepdims", ast.Call(node.func, node.args, [
            *node.keywords, ast.keyword(arg=keeps, value=ast.Constant(True))]))


def _axis_at(node: ast.Call) -> int:
    """Where a reduction's axis stands among its positional arguments: after the array of a
    module's function (`np.sum(x, 1)`), first for a method (`x.sum(1)`)."""
    module = node.func.value if isinstance(node.func, ast.Attribute) else None
    return 1 if isinstance(module, ast.Name) and module.id in ARRAY_MODULES else 0


def _positional_axis(node: ast.Call) -> Iterator[Edit]:
    """The axis of a reduction given by position (`x.sum(0)`, `np.sum(x, 1)`,
    `torch.softmax(z, 0)`) read as another."""
    at = _axis_at(node)
    axis = _int_constant(node.args[at]) if len(node.args) > at else None
    if axis is None:
        return
    for other in sorted({0, 1, -1, -2} - {axis}):
        args = [*node.args[:at], ast.Constant(other), *node.args[at + 1:]]
        yield Edit("wrong_axis", ast.Call(node.func, args, node.keywords))


def _keeps_dimension(node: ast.Call, scope: Scope) -> str | None:
    """The keyword that would keep the axis a reduction (one of REDUCTIONS) over one axis
    drops (`keepdims` in numpy, `keepdim` in torch), or None where the call keeps it already,
    reduces over every axis, or cannot keep one."""
    assert isinstance(node.func, ast.Attribute)
    given = {k.arg for k in node.keywords}
    if node.func.attr in SHAPE_KEEPING or given & {"keepdims", "keepdim"}:
        return None
    if "axis" in given:
        return "keepdims"
    if "dim" in given:
        return "keepdim"
    at = _axis_at(node)
    if len(node.args) != at + 1 or _int_constant(node.args[at]) is None:
        return None
    module = node.func.value
    library = module.id if at and isinstance(module, ast.Name) else scope.arrays
    return "keepdim" if library == "torch" else "keepdims"


def _loss_reduction(node: ast.AST) -> Iterator[Edit]:
    """A loss summed where it is averaged and back, through its `reduction` (a torch loss,
    function or module, averages unless told otherwise: `mse_loss(p, y, reduction="sum")`
    for `mse_loss(p, y)`)."""
    if not isinstance(node, ast.Call):
        return
    name = node.func.attr if isinstance(node.func, ast.Attribute) else \
        node.func.id if isinstance(node.func, ast.Name) else ""
    if not (name.endswith(("_loss", "Loss")) or name in MEAN_LOSSES):
        return
    given = next((k for k in node.keywords if k.arg == "reduction"), None)
    said = given.value.value if given is not None and isinstance(given.value, ast.Constant) \
        else "mean" if given is None else None
    other = {"mean": "sum", "sum": "mean"}.get(said) if isinstance(said, str) else None
    if other is None:
        return
    keywords = [k for k in node.keywords if k is not given]
    keywords.append(ast.keyword(arg="reduction", value=ast.Constant(other)))
    yield Edit("sum_for_mean" if other == "sum" else "mean_for_sum",
               ast.Call(node.func, node.args, keywords))


MEAN_LOSSES = frozenset({"cross_entropy", "binary_cross_entropy",
                         "binary_cross_entropy_with_logits", "kl_div"})
"""torch's losses whose name does not end in `_loss`, each averaging by default."""


SIBLINGS = {"maximum": "max", "max": "maximum", "minimum": "min", "min": "minimum",
            "sum": "cumsum", "cumsum": "sum", "prod": "cumprod", "cumprod": "prod",
            "log": "log1p", "log1p": "log", "exp": "expm1", "expm1": "exp",
            "argmax": "max", "argmin": "min", "clip": "clamp", "clamp": "clip",
            "no_grad": "enable_grad", "enable_grad": "no_grad"}
"""Functions a hurried hand writes for one another: the elementwise maximum and the reduction
max, a sum and a running sum, log and log1p, the context that turns autograd off and the one
that turns it on."""


def siblings(node: ast.AST, scope: Scope) -> Iterator[Edit]:
    """A function of the same family called in place of the right one (`np.max(z, 0)` where
    `np.maximum(z, 0)` was meant)."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
            and node.func.attr in SIBLINGS:
        yield Edit("sibling_function",
                   ast.Call(ast.Attribute(node.func.value, SIBLINGS[node.func.attr], ast.Load()),
                            node.args, node.keywords))


REVERSED: dict[type[ast.cmpop], type[ast.cmpop]] = {
    ast.Lt: ast.Gt, ast.Gt: ast.Lt, ast.LtE: ast.GtE, ast.GtE: ast.LtE}


NEGATED = {ast.Is: ast.IsNot, ast.IsNot: ast.Is, ast.In: ast.NotIn, ast.NotIn: ast.In,
           ast.Eq: ast.NotEq, ast.NotEq: ast.Eq}


def negations(node: ast.AST, scope: Scope) -> Iterator[Edit]:
    """A branch's or a loop's condition turned into its opposite: `if not ready` for `if
    ready` and back, `is not None` for `is None`, `!=` for `==`, `not in` for `in` (an
    ordering's opposite is comparisons' boundary and turn)."""
    if not isinstance(node, ast.If | ast.While | ast.IfExp):
        return
    test = node.test
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        opposite = test.operand
    elif isinstance(test, ast.Compare) and len(test.ops) == 1 and type(test.ops[0]) in NEGATED:
        opposite = ast.Compare(test.left, [NEGATED[type(test.ops[0])]()], test.comparators)
    else:
        opposite = ast.UnaryOp(ast.Not(), test)
    made = copy.copy(node)
    made.test = opposite
    yield Edit("negated_condition", made)


def comparisons(node: ast.AST, scope: Scope) -> Iterator[Edit]:
    """A strict comparison made inclusive, or the other way round; a comparison turned round
    (`gap >= limit` for `gap <= limit`); a whole-number bound off by
    one (`i > 1` for `i > 0`); an indicator of the positive values (`z > 0`, a ReLU's gate)
    taken as their sign (`np.sign(z)`, -1 below zero where the indicator is 0)."""
    swaps = {ast.Lt: ast.LtE, ast.LtE: ast.Lt, ast.Gt: ast.GtE, ast.GtE: ast.Gt}
    if isinstance(node, ast.Compare) and len(node.ops) == 1 and type(node.ops[0]) in swaps:
        yield Edit("boundary", ast.Compare(node.left, [swaps[type(node.ops[0])]()],
                                           node.comparators))
        yield Edit("reversed_comparison", ast.Compare(
            node.left, [REVERSED[type(node.ops[0])]()], node.comparators))
        (bound,) = node.comparators
        if _int_constant(bound) is not None:
            for by in (-1, 1):
                yield Edit("shift_bound", ast.Compare(node.left, node.ops, [_shifted(bound, by)]))
        if scope.arrays and isinstance(node.ops[0], ast.Gt | ast.GtE) \
                and isinstance(bound, ast.Constant) and bound.value == 0:
            sign = ast.Attribute(ast.Name(scope.arrays, ast.Load()), "sign", ast.Load())
            yield Edit("sign_for_indicator", ast.Call(sign, [node.left], []))


FILLED = {"zeros": "ones", "ones": "zeros", "zeros_like": "ones_like",
          "ones_like": "zeros_like"}
"""An array's constructors by the value they fill it with, each with the one a slip puts in
its place."""


def initial_values(node: ast.AST, scope: Scope) -> Iterator[Edit]:
    """An array started from the wrong value: ones for zeros and back (a running sum started
    at one, a product at zero), the identity for a square of zeros and back (an adjoint
    started as the identity, a running product as zeros)."""
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
        return
    name = node.func.attr
    if name in FILLED:
        yield Edit("other_initial_value", ast.Call(
            ast.Attribute(node.func.value, FILLED[name], ast.Load()), node.args, node.keywords))
    shape = node.args[0] if len(node.args) == 1 else None
    if name == "zeros" and isinstance(shape, ast.Tuple) and len(shape.elts) == 2 \
            and ast.dump(shape.elts[0]) == ast.dump(shape.elts[1]):
        yield Edit("other_initial_value", ast.Call(
            ast.Attribute(node.func.value, "eye", ast.Load()), [shape.elts[0]], node.keywords))
    elif name == "eye" and shape is not None and not isinstance(shape, ast.Starred):
        square = ast.Tuple([shape, copy.deepcopy(shape)], ast.Load())
        yield Edit("other_initial_value", ast.Call(
            ast.Attribute(node.func.value, "zeros", ast.Load()), [square], node.keywords))


def index_arrays(node: ast.AST, scope: Scope) -> Iterator[Edit]:
    """One of the indices of a subscript that pairs several (`log_probs[rows, y]`: one entry
    per row) taken as the whole axis (`log_probs[:, y]`: every row's entries at each label);
    two neighbouring indices of a subscript in the other order (`dlogits[y, rows]`, `W[j, i]`,
    `x[0, :]` for `x[:, 0]`: a row read for a column)."""
    if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Tuple):
        parts = node.slice.elts
        paired = [i for i, part in enumerate(parts) if isinstance(part, ast.Name | ast.Call)]
        if len(paired) >= 2:
            for position in paired:
                yield Edit("whole_axis", _with_part(node, position, ast.Slice()))
        for i in range(len(parts) - 1):
            if ast.dump(parts[i]) != ast.dump(parts[i + 1]) \
                    and not any(isinstance(p, ast.Starred) for p in parts[i:i + 2]):
                swapped = [*parts[:i], parts[i + 1], parts[i], *parts[i + 2:]]
                yield Edit("swap_indices", ast.Subscript(node.value, ast.Tuple(swapped, ast.Load()),
                                                         node.ctx))


def _int_constant(node: ast.AST) -> int | None:
    """The whole number a constant or a negated constant spells (`1`, `-2`); None otherwise."""
    try:
        value = ast.literal_eval(node) if isinstance(node, ast.Constant | ast.UnaryOp) else None
    except ValueError:
        return None
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _other_axes(axis: int) -> list[int]:
    """The axes a slip reads for `axis`, those counted from the same end first: on a matrix
    `shape[1]` and `shape[-1]` are one size, and a hint shows the spelling of the code around
    it (`A.shape[-1]` for `A.shape[-2]`, `x.shape[1]` for `x.shape[0]`)."""
    return sorted({0, 1, -1, -2} - {axis},
                  key=lambda other: ((other < 0) != (axis < 0), abs(other)))


def dimensions(node: ast.AST, scope: Scope) -> Iterator[Edit]:
    """A size read from another dimension: `A.shape[1]` for `A.shape[0]`, `x.size(0)` for
    `x.size(1)` (the rows for the columns)."""
    if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Attribute) \
            and node.value.attr == "shape":
        axis = _int_constant(node.slice)
        if axis is not None:
            for other in _other_axes(axis):
                yield Edit("other_dimension", _with_part(node, 0, ast.Constant(other)))
    elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
            and node.func.attr == "size" and len(node.args) == 1 and not node.keywords:
        axis = _int_constant(node.args[0])
        if axis is not None:
            for other in _other_axes(axis):
                yield Edit("other_dimension", ast.Call(node.func, [ast.Constant(other)], []))


LOWER_PRECISION = {"float64": "float32", "double": "float", "complex128": "complex64"}
"""Each double-precision spelling and its single-precision twin (`np.float64`, `torch.double`,
`x.double()`, `astype("float64")`)."""


def _single(node: ast.AST) -> ast.AST | None:
    """The single-precision twin of a double-precision spelling; None for anything else."""
    if isinstance(node, ast.Attribute) and node.attr in LOWER_PRECISION:
        return ast.Attribute(node.value, LOWER_PRECISION[node.attr], node.ctx)
    if isinstance(node, ast.Constant) and isinstance(node.value, str) \
            and node.value in LOWER_PRECISION and node.value != "double":
        return ast.Constant(LOWER_PRECISION[node.value])
    return None


class _AllSingle(ast.NodeTransformer):
    def visit(self, node: ast.AST) -> ast.AST:
        return _single(node) or self.generic_visit(node)


def precision(node: ast.AST, scope: Scope) -> Iterator[Edit]:
    """Single precision where the reference computes in double: a float32 dtype, `.float()`
    for `.double()`; at one spelling, and at every one of a statement at once (who computes in
    float32 casts both operands: `a.float(), b.float()`). And an array made without the dtype
    the reference gives it (`torch.eye(d)` for `torch.eye(d, dtype=W.dtype)`): the library's
    default, float32 in torch and float64 in numpy."""
    if isinstance(node, ast.Call) and any(k.arg == "dtype" for k in node.keywords):
        yield Edit("default_dtype", ast.Call(node.func, node.args,
                                             [k for k in node.keywords if k.arg != "dtype"]))
    single = _single(node)
    if single is not None:
        yield Edit("lower_precision", single)
    elif isinstance(node, ast.Assign | ast.AugAssign | ast.Return | ast.Expr) \
            and sum(_single(n) is not None for n in ast.walk(node)) > 1:
        yield Edit("lower_precision", _AllSingle().visit(copy.deepcopy(node)))


def members(node: ast.AST, scope: Scope) -> Iterator[Edit]:
    """Another member of the same object read in place of this one: `model.head_a` for
    `model.head_b`, `params["W1"]` for `params["W2"]` (siblings the function reads alike, by
    attribute or by string key, from the same name)."""
    func = node.func if isinstance(node, ast.Call) else None
    if isinstance(node, ast.Call) and isinstance(func, ast.Attribute) \
            and isinstance(func.value, ast.Name):
        siblings = scope.members.get((func.value.id, "()"), ())
        for other in siblings if func.attr in siblings else ():
            if other != func.attr:
                yield Edit("other_member", ast.Call(ast.Attribute(func.value, other, ast.Load()),
                                                    node.args, node.keywords))
    elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Load) \
            and isinstance(node.value, ast.Name):
        siblings = scope.members.get((node.value.id, "."), ())
        for other in siblings if node.attr in siblings else ():
            if other != node.attr:
                yield Edit("other_member", ast.Attribute(node.value, other, ast.Load()))
    elif isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Load) \
            and isinstance(node.value, ast.Name) and isinstance(node.slice, ast.Constant) \
            and isinstance(node.slice.value, str):
        for other in scope.members.get((node.value.id, "[]"), ()):
            if other != node.slice.value:
                yield Edit("other_member", ast.Subscript(node.value, ast.Constant(other),
                                                         ast.Load()))


def loops(node: ast.AST, scope: Scope) -> Iterator[Edit]:
    """A loop run in the opposite order."""
    if isinstance(node, ast.For):
        changed = copy.copy(node)
        source = node.iter
        if isinstance(source, ast.Call) and isinstance(source.func, ast.Name) \
                and source.func.id == "reversed" and len(source.args) == 1:
            changed.iter = source.args[0]
        else:
            changed.iter = _expr("reversed(list(_))")
            changed.iter.args[0].args[0] = source  # type: ignore[attr-defined]
        yield Edit("reverse_loop", changed)


def names(node: ast.AST, scope: Scope) -> Iterator[Edit]:
    """Another of the function's variables read in place of this one."""
    if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and node.id in scope.names:
        for other in scope.names:
            if other != node.id:
                yield Edit("other_variable", ast.Name(other, ast.Load()))


def sizes(node: ast.AST, scope: Scope) -> Iterator[Edit]:
    """One size read for another unpacked with it (`(T,)` for `(D,)` after `T, D = a.shape`):
    sizes are left out of other_variable (a size read for an array is no slip), yet one for
    its neighbour is a slip made often."""
    if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
        for together in scope.sizes:
            if node.id in together:
                for other in together:
                    if other != node.id:
                        yield Edit("other_size", ast.Name(other, ast.Load()))


def _unpacked_sizes(function: ast.FunctionDef) -> tuple[tuple[str, ...], ...]:
    """The names the function unpacks together from one value, once each (`T, D = a.shape`,
    `B, C = logits.shape`): sizes, most often, one of which may be read for another."""
    assigned = Counter(target.id for node in ast.walk(function)
                       if isinstance(node, ast.Assign) for outer in node.targets
                       for target in ast.walk(outer) if isinstance(target, ast.Name))
    found = []
    for node in ast.walk(function):
        if isinstance(node, ast.Assign) and len(node.targets) == 1 \
                and isinstance(node.targets[0], ast.Tuple):
            names = [t.id for t in node.targets[0].elts if isinstance(t, ast.Name)]
            once = tuple(n for n in names if assigned[n] == 1 and n != "_")
            if len(once) > 1:
                found.append(once)
    return tuple(found)


def unpacking(node: ast.AST, scope: Scope) -> Iterator[Edit]:
    """Two neighbouring names of a tuple unpacking in the other order (`B, A = saved` for
    `A, B = saved`)."""
    if isinstance(node, ast.Assign) and len(node.targets) == 1 \
            and isinstance(node.targets[0], ast.Tuple):
        names = node.targets[0].elts
        for i in range(len(names) - 1):
            first, second = names[i], names[i + 1]
            if isinstance(first, ast.Name) and isinstance(second, ast.Name) \
                    and first.id != second.id:
                swapped = [*names[:i], names[i + 1], names[i], *names[i + 2:]]
                yield Edit("swap_unpacking", ast.Assign([ast.Tuple(swapped, ast.Store())],
                                                        node.value))


def graph_cuts(node: ast.AST, scope: Scope) -> Iterator[Edit]:
    """In torch, a result computed by a call cut from autograd's graph (`h = model.trunk(x)`
    written `h = model.trunk(x).detach()`), and a `.detach()` left out."""
    if scope.arrays != "torch":
        return
    if isinstance(node, ast.Assign) and len(node.targets) == 1 \
            and isinstance(node.targets[0], ast.Name) and isinstance(node.value, ast.Call) \
            and _detached(node.value) is None:
        yield Edit("add_detach", ast.Assign(node.targets, ast.Call(
            ast.Attribute(node.value, "detach", ast.Load()), [], [])))
    elif isinstance(node, ast.Call) and (inner := _detached(node)) is not None:
        yield Edit("drop_detach", inner)


def _detached(node: ast.Call) -> ast.expr | None:
    """What `x.detach()` detaches (x); None for any other call."""
    func = node.func
    return func.value if isinstance(func, ast.Attribute) and func.attr == "detach" \
        and not node.args else None


def new_axes(node: ast.AST, scope: Scope) -> Iterator[Edit]:
    """An axis of size 1 left out (`h0[None]`, `x[:, None]`, `x.unsqueeze(0)` or
    `np.expand_dims(x, 0)` written `h0`, `x`), and a vector operand of arithmetic made a column
    (`X @ W1 + b1` written with `b1[:, None]`): either way the shapes broadcast differently, or
    not at all."""
    if isinstance(node, ast.Subscript) and (kept := _without_new_axes(node)) is not None:
        yield Edit("drop_new_axis", kept)
    elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
        if node.func.attr == "unsqueeze" and len(node.args) == 1:
            yield Edit("drop_new_axis", node.func.value)
        elif node.func.attr == "expand_dims" and len(node.args) == 2:
            yield Edit("drop_new_axis", node.args[0])
    elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add | ast.Sub | ast.Mult
                                                    | ast.Div):
        for side, operand in enumerate((node.left, node.right)):
            if isinstance(operand, ast.Name) or isinstance(operand, ast.Subscript) \
                    and _without_new_axes(operand) is None:
                column = ast.Subscript(operand, ast.Tuple([ast.Slice(), ast.Constant(None)],
                                                          ast.Load()), ast.Load())
                yield Edit("add_column_axis", ast.BinOp(column, node.op, node.right) if side == 0
                           else ast.BinOp(node.left, node.op, column))


def _new_axis(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) and node.value is None \
        or isinstance(node, ast.Attribute) and node.attr == "newaxis"


def _without_new_axes(node: ast.Subscript) -> ast.expr | None:
    """The subscript without its new axes (`x[:, None]` gives `x`, `x[None, 0]` gives
    `x[0]`); None where it adds none."""
    parts = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
    if not any(_new_axis(p) for p in parts):
        return None
    rest = [p for p in parts if not _new_axis(p)]
    if all(isinstance(p, ast.Slice) and p.lower is p.upper is p.step is None for p in rest):
        return node.value
    return ast.Subscript(node.value, rest[0] if len(rest) == 1 else ast.Tuple(rest, ast.Load()),
                         node.ctx)


def _imported_from_siblings(tree: ast.Module) -> frozenset[str]:
    """The functions a part imports from another part of its round (`from .part1_inplace
    import prefix_products_out`): called with its arguments in each other's places, as the
    module's own are."""
    return frozenset(alias.asname or alias.name for node in tree.body
                     if isinstance(node, ast.ImportFrom) and node.level > 0
                     for alias in node.names if alias.name != "*")


def repeats(node: ast.AST, scope: Scope) -> Iterator[Edit]:
    """A loop that should repeat until its condition fails written as a test made once (`if
    g.ndim > len(shape): g = g.sum(0)` for `while ...`: one leading axis summed where several
    are); tried in a candidate's file, such a test made a loop again. A loop that never ends
    is stopped like any mutant."""
    if isinstance(node, ast.While) and not node.orelse:
        yield Edit("if_for_while", ast.If(node.test, node.body, []))
    elif isinstance(node, ast.If) and not node.orelse \
            and not any(isinstance(n, ast.Return | ast.Raise | ast.Break | ast.Continue)
                        for n in ast.walk(node)):
        yield Edit("while_for_if", ast.While(node.test, node.body, []))


COPIES = ("copy", "clone")
"""The methods that make an array's own memory out of a view of another's."""


def copies(node: ast.AST, scope: Scope) -> Iterator[Edit]:
    """A copy left out, so a name holds a view of memory that is written later (`left =
    M[L].copy()` written `left = M[L]`: the saved values change when M[L] is overwritten);
    tried in a candidate's file, a copy of a slice or an index taken where one is bound to a
    name (`left = M[L]` made `left = M[L].copy()`), in either library's spelling."""
    if not (isinstance(node, ast.Assign) and len(node.targets) == 1):
        return
    value = node.value
    if isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) \
            and value.func.attr in COPIES and not value.args and not value.keywords:
        yield Edit("dropped_copy", ast.Assign(node.targets, value.func.value))
        return
    parts = value.elts if isinstance(value, ast.Tuple) else [value]
    views = [i for i, part in enumerate(parts) if isinstance(part, ast.Subscript)
             and isinstance(part.value, ast.Name) and part.value.id in scope.names]
    method = "clone" if scope.arrays == "torch" else "copy"

    def copied(which: set[int]) -> ast.expr:
        made = [ast.Call(ast.Attribute(part, method, ast.Load()), [], []) if i in which else part
                for i, part in enumerate(parts)]
        return ast.Tuple(made, ast.Load()) if isinstance(value, ast.Tuple) else made[0]

    for index in views:
        yield Edit("added_copy", ast.Assign(node.targets, copied({index})))
    if len(views) > 1:  # `a, b = M[L], C[L]`: both saved from the memory about to be written
        yield Edit("added_copy", ast.Assign(node.targets, copied(set(views))))


def jumps(node: ast.AST, scope: Scope) -> Iterator[Edit]:
    """A loop left where it should go on to the next item (`break` for `continue`), and the
    other way round."""
    if isinstance(node, ast.Continue):
        yield Edit("break_for_continue", ast.Break())
    elif isinstance(node, ast.Break):
        yield Edit("continue_for_break", ast.Continue())


def einsum_subscripts(node: ast.AST, scope: Scope) -> Iterator[Edit]:
    """An einsum's subscripts with one term's last two letters the other way round (a
    transpose of that operand, or of the result, added or left out: `"ij,jk->ik"` for
    `"ji,jk->ik"`), and the two operands of a two-term einsum in each other's places, its
    subscripts kept."""
    if not (isinstance(node, ast.Call) and node.args and _called(node) == "einsum"
            and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)
            and "->" in node.args[0].value):
        return
    spec = node.args[0].value.replace(" ", "")
    inputs, output = spec.split("->", 1)
    terms = [*inputs.split(","), output]
    for k, term in enumerate(terms):
        if len(term) >= 2 and term[-2:].isalpha():
            changed = [*terms[:k], term[:-2] + term[-1] + term[-2], *terms[k + 1:]]
            subscripts = ",".join(changed[:-1]) + "->" + changed[-1]
            yield Edit("einsum_transpose",
                       ast.Call(node.func, [ast.Constant(subscripts), *node.args[1:]],
                                node.keywords))
    if len(terms) == 3 and len(node.args) == 3:
        yield Edit("swap_operands", ast.Call(node.func, [node.args[0], node.args[2],
                                                         node.args[1]], node.keywords))


def _called(node: ast.Call) -> str:
    """The name a call calls (`np.sum(x)` and `x.sum()`: sum; `sum(x)`: sum); "" for another."""
    func = node.func
    return func.attr if isinstance(func, ast.Attribute) else \
        func.id if isinstance(func, ast.Name) else ""


OPERATORS: tuple[Operator, ...] = (matmul_operands, accumulation, loops, off_by_one,
                                   dimensions, index_arrays, comparisons, negations, reductions,
                                   siblings,
                                   precision, initial_values, arithmetic, left_out, groupings,
                                   discarded, repeats, copies,
                                   conditions,
                                   calls, moved_calls, joins, reversals,
                                   results, unpacking, jumps, graph_cuts, new_axes, members,
                                   einsum_subscripts, sizes, names)
PRIORITY = ("swap_operands", "drop_transpose", "add_transpose", "einsum_transpose",
            "full_transpose", "every_full_transpose", "matrix_only_transpose",
            "every_matrix_only_transpose", "stack_transpose", "every_stack_transpose",
            "leading_transpose", "assign_for_accumulate", "accumulate_for_assign", "reverse_loop",
            "unreversed",
            "shift_index", "shift_bound", "shift_range", "other_end", "whole_axis", "swap_indices",
            "other_dimension", "boundary", "reversed_comparison", "negated_condition",
            "sign_for_indicator",
            "sum_for_mean", "mean_for_sum", "wrong_axis", "every_wrong_axis", "every_axis",
            "drop_keepdims", "every_drop_keepdims", "add_keepdims", "every_add_keepdims",
            "other_join",
            "sibling_function", "lower_precision", "every_lower_precision", "default_dtype",
            "other_initial_value",
            "opposite_extreme", "swap_unpacking", "swap_results", "swap_arguments", "swap_calls",
            "swap_joined",
            "flip_sign", "break_for_continue", "continue_for_break", "add_detach", "drop_detach",
            "drop_new_axis",
            "drop_factor", "double_factor", "halve_factor", "inverted_operator", "floor_division",
            "true_division", "reverse_difference",
            "reverse_ratio", "regrouped", "drop_call", "moved_call", "drop_term",
            "drop_operand",
            "drop_condition",
            "listed_once", "swap_steps", "hoisted_step", "return_in_loop", "drop_step",
            "unentered_with",
            "add_column_axis",
            "out_of_place", "discarded_result", "kept_result", "if_for_while", "while_for_if",
            "dropped_copy", "added_copy", "other_member", "other_size", "other_variable")
"""The order in which slips are tried and a tie is named: the most specific first, the
broadest (another variable read) last, so a cap on the count drops the broadest."""


def _statement_edits(body: list[ast.stmt]) -> Iterator[tuple[int, Edit]]:
    """Block-level slips: two neighbouring steps in the other order, a step left out, a step
    of a loop hoisted before it, the return that follows a loop indented into it (the loop
    stops after its first pass), a context manager called as a statement of its own instead
    of entered with `with`; and, tried in a candidate's file, an iterable that two steps pass
    over made a list before the first (`params = list(params)`): a one-shot iterator, such as
    model.parameters(), is used up by the first pass."""
    listed: set[str] = set()
    for i, statement in enumerate(body):
        for name in sorted(_iterated(statement) - listed):
            if any(name in _iterated(later) for later in body[i + 1:]):
                listed.add(name)
                yield i, Edit("listed_once", [ast.Assign(
                    [ast.Name(name, ast.Store())],
                    ast.Call(ast.Name("list", ast.Load()), [ast.Name(name, ast.Load())], [])),
                    statement])
        if _is_guard(statement) or isinstance(statement, ast.Return):
            continue
        if i + 1 < len(body) and not isinstance(body[i + 1], ast.Return) \
                and not _is_guard(body[i + 1]):
            yield i, Edit("swap_steps", [body[i + 1], statement])
        if len(body) > 1:
            yield i, Edit("drop_step", [ast.Pass()])
        yield from ((i, edit) for edit in _hoisted(statement))
        if isinstance(statement, ast.For | ast.While) and i + 1 < len(body) \
                and isinstance(body[i + 1], ast.Return):
            early = copy.copy(statement)
            early.body = [*statement.body, body[i + 1]]
            yield i, Edit("return_in_loop", [early])
        if isinstance(statement, ast.With):
            governed = tuple(head_line(ast.unparse(step)) for inner in statement.body
                             for step in ast.walk(inner) if isinstance(step, ast.stmt))
            yield i, Edit("unentered_with", [*(ast.Expr(item.context_expr)
                                               for item in statement.items), *statement.body],
                          governed)


def _iterated(statement: ast.stmt) -> set[str]:
    """The names a statement passes over: a `for` loop's or a comprehension's iterable."""
    return {node.iter.id for node in ast.walk(statement)
            if isinstance(node, ast.For | ast.comprehension) and isinstance(node.iter, ast.Name)}


def _hoisted(loop: ast.stmt) -> Iterator[Edit]:
    """A step of a loop's body done once, before the loop, where it must be redone each time
    round (a forward computed before the training loop): each assignment of the body that does
    not read the loop's counter."""
    if not isinstance(loop, ast.For | ast.While) or len(loop.body) < 2:
        return
    counters = {n.id for n in ast.walk(loop.target) if isinstance(n, ast.Name)} \
        if isinstance(loop, ast.For) else set()
    for j, step in enumerate(loop.body):
        if isinstance(step, ast.Assign | ast.AugAssign) and not counters & {
                n.id for n in ast.walk(step) if isinstance(n, ast.Name)}:
            rest = copy.copy(loop)
            rest.body = [*loop.body[:j], *loop.body[j + 1:]]
            yield Edit("hoisted_step", [step, rest])


def _is_guard(statement: ast.stmt) -> bool:
    """Input validation (an `if` whose body only raises) and docstrings: no slip there changes
    a valid call's result."""
    if isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Constant):
        return True
    return isinstance(statement, ast.If) and all(isinstance(s, ast.Raise)
                                                  for s in statement.body)


def _bound_names(function: ast.FunctionDef) -> tuple[str, ...]:
    """The function's values a slip could read in place of one another: its parameters and
    the names it assigns one value to. Loop counters and names unpacked from a tuple (sizes,
    most often) are left out: reading a size for an array is not a slip anyone makes."""
    found = [a.arg for a in function.args.args + function.args.kwonlyargs]
    counters = {n.id for node in ast.walk(function) if isinstance(node, ast.For | ast.comprehension)
                for n in ast.walk(node.target) if isinstance(n, ast.Name)}
    for node in ast.walk(function):
        if isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                if isinstance(target, ast.Name) and target.id not in found \
                        and target.id not in counters:
                    found.append(target.id)
    return tuple(name for name in found if name != "_")


def _reassigned(function: ast.FunctionDef) -> frozenset[str]:
    """The plain names the function assigns in more than one statement (`dB = zeros(...)`, then
    `dB = dB + ...` or `dB = outer(...)` in a loop)."""
    counts = Counter(target.id for node in ast.walk(function) if isinstance(node, ast.Assign)
                     for target in node.targets if isinstance(target, ast.Name))
    return frozenset(name for name, count in counts.items() if count > 1)


ARRAY_METHODS = frozenset({*REDUCTIONS, *UNARY, *LOWER_PRECISION, *LOWER_PRECISION.values(),
                           "reshape", "view", "transpose", "swapaxes", "pow", "detach", "clone",
                           "item", "numpy", "t", "unsqueeze", "squeeze", "flatten", "size",
                           "matmul", "astype", "copy", "to", "backward"})
"""Methods of an array: a name they are called on is an array, whose methods are not siblings
(a sum for a mean is another operator's slip, and `x.reshape` for `x.sum` nobody writes)."""
MOST_MEMBERS = 6
"""Siblings an object's member may be mistaken for, at most: a slip swaps like for like among a
few (two heads, W1 and W2); an object read for dozens of members is a namespace."""


def _read_members(function: ast.FunctionDef, arrays: str | None
                  ) -> dict[tuple[str, str], tuple[str, ...]]:
    """The members the function reads from each name, by kind: (name, ".") -> attributes not
    called as methods, and those called, kept apart as (name, "()"), (name, "[]") -> string
    keys. The array library's functions (`np.sum`) and an array's methods (ARRAY_METHODS) are
    other operators' business, and a name read for more than MOST_MEMBERS of one kind is left
    out."""
    called = {id(node.func) for node in ast.walk(function) if isinstance(node, ast.Call)}
    found: dict[tuple[str, str], list[str]] = {}
    for node in ast.walk(function):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) \
                and isinstance(node.ctx, ast.Load) and node.value.id != arrays:
            key, member = (node.value.id, "()" if id(node) in called else "."), node.attr
        elif isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) \
                and isinstance(node.slice, ast.Constant) and isinstance(node.slice.value, str):
            key, member = (node.value.id, "[]"), node.slice.value
        else:
            continue
        if member not in found.setdefault(key, []):
            found[key].append(member)
    return {key: tuple(members) for key, members in found.items()
            if 1 < len(members) <= MOST_MEMBERS
            and not (key[1] == "()" and ARRAY_METHODS.intersection(members))}


@functools.lru_cache(maxsize=64)
def mutants(source: str) -> tuple[Mutant, ...]:
    """Every one-slip variant of `source` (a reference part's module) that the operators make,
    each a whole module, in operator order; none in input validation. Kept per source: a worker
    diagnoses many submissions against the same few references."""
    tree = ast.parse(source)
    found: list[Mutant] = []
    seen: set[str] = set()
    module = _Module(tree, source)
    arrays = _array_library(tree)
    functions = [(path, node) for path, node in _walk(tree, ())
                 if isinstance(node, ast.FunctionDef)]
    defined = frozenset(node.name for node in tree.body
                        if isinstance(node, ast.FunctionDef | ast.ClassDef)) \
        | _imported_from_siblings(tree)
    for base, function in functions:
        scope = Scope(_bound_names(function), arrays, _read_members(function, arrays), defined,
                      _reassigned(function), _unpacked_sizes(function))
        nodes = list(_walk_body(function, base))
        for operator in OPERATORS:
            for path, node in nodes:
                for edit in operator(node, scope):
                    _keep(found, seen, module, path, node, edit)
        for path, body in _blocks(function, base, nodes):
            for i, edit in _statement_edits(body):
                _keep(found, seen, module, (*path, i), body[i], edit)
    found.extend(_everywhere(source, found))
    found.sort(key=lambda m: PRIORITY.index(m.operator))
    return tuple(found[:MAX_MUTANTS])


EVERYWHERE = ("full_transpose", "matrix_only_transpose", "stack_transpose", "wrong_axis",
              "drop_keepdims", "add_keepdims", "lower_precision")
"""The slips made at every site alike as readily as at one (a misread API or convention: `.t()`
for each product's transpose of a stack, every reduction of a softmax over the batch, float32
throughout), tried also at all their sites at once (the first alternative at each), as the
operator `every_<name>`: one change leaves the other sites wrong, and a crash at the first
hides the second."""


def _everywhere(source: str, found: Sequence[Mutant]) -> Iterator[Mutant]:
    """For each operator of EVERYWHERE made at two sites or more, the variant with all of
    them made, shown as its first site."""
    for operator in EVERYWHERE:
        made = _merged(source, [m for m in found if m.operator == operator])
        if made is not None:
            merged, first, sites = made
            yield Mutant(f"every_{operator}", first.before, first.after, merged,
                         tuple(e for m in sites for e in m.explains), first.line_before,
                         first.line_after)


def _merged(source: str, variants: Sequence[Mutant]
            ) -> tuple[str, Mutant, list[Mutant]] | None:
    """`source` with the change of each variant made (each replaces a run of its lines; of
    variants changing the same lines, the first), the first variant and those made; None
    where fewer than two could be."""
    lines = source.splitlines(keepends=True)
    changes: list[tuple[int, int, list[str]]] = []
    sites: list[Mutant] = []
    for variant in variants:
        theirs = variant.source.splitlines(keepends=True)
        matcher = difflib.SequenceMatcher(None, lines, theirs, autojunk=False)
        own = [(i1, i2, theirs[j1:j2]) for tag, i1, i2, j1, j2 in matcher.get_opcodes()
               if tag != "equal"]
        if own and not any(_overlap(a, b) for a in own for b in changes):
            changes += own
            sites.append(variant)
    if len(sites) < 2:
        return None
    for start, end, new in sorted(changes, key=lambda change: change[:2], reverse=True):
        lines[start:end] = new
    return "".join(lines), sites[0], sites


def _overlap(a: tuple[int, int, list[str]], b: tuple[int, int, list[str]]) -> bool:
    """Whether two changes (a run of lines replaced) touch the same lines, or insert at one
    place."""
    return a[0] < b[1] and b[0] < a[1] or a[0] == b[0]


def _array_library(tree: ast.Module) -> str | None:
    """The name the module imports numpy or torch under (`import numpy as np`: np)."""
    for node in tree.body:
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name in ("numpy", "torch"):
                    return alias.asname or alias.name
    return None


class _Module:
    """A module's tree and its source lines: a slip changes one statement (or a few in a row),
    and only those are unparsed for each mutant, in place of their lines (unparsing the whole
    module for each of a thousand slips was most of the time a diagnosis took)."""

    def __init__(self, tree: ast.Module, source: str) -> None:
        self.tree = tree
        self.lines = source.splitlines(keepends=True)

    def text(self, old: Sequence[ast.stmt], new: Sequence[ast.stmt]) -> str:
        """The module's source with the lines of `old` (statements in a row, where the parse
        put them) in place of `new` as the tree now holds them; the whole tree unparsed where
        `old` shares a line with other code."""
        first, last = old[0], old[-1]
        end = last.end_lineno or last.lineno
        head = self.lines[first.lineno - 1][:first.col_offset]
        tail = self.lines[end - 1][last.end_col_offset or 0:].strip()
        if head.strip() or (tail and not tail.startswith("#")):
            return ast.unparse(self.tree)
        body = "".join(textwrap.indent(ast.unparse(statement), head) + "\n"
                       for statement in new) or f"{head}pass\n"
        return "".join([*self.lines[:first.lineno - 1], body, *self.lines[end:]])


Where = tuple[Any, ...]
"""A node's place in the module: field names and list indices from the root."""


ANNOTATIONS = frozenset({"annotation", "returns"})
"""The fields that hold type annotations, which no slip changes the running of."""


def _walk(node: ast.AST, path: Where) -> Iterator[tuple[Where, ast.AST]]:
    """Every node below `node` (itself included) with its path; of a guard only its test (a
    slip there rejects valid input, or lets invalid input through), of a docstring and of an
    annotation nothing."""
    yield path, node
    for field, value in ast.iter_fields(node):
        if field in ANNOTATIONS:
            continue
        if isinstance(value, list):
            for i, item in enumerate(value):
                if isinstance(item, ast.AST):
                    yield from _walk_statement(item, (*path, field, i))
        elif isinstance(value, ast.AST):
            yield from _walk(value, (*path, field))


def _walk_statement(node: ast.AST, path: Where) -> Iterator[tuple[Where, ast.AST]]:
    if not (isinstance(node, ast.stmt) and _is_guard(node)):
        yield from _walk(node, path)
    elif isinstance(node, ast.If):
        yield from _walk(node.test, (*path, "test"))


def _walk_body(function: ast.FunctionDef, base: Where) -> Iterator[tuple[Where, ast.AST]]:
    """Every node of the function's body (of a guard, its test; no docstring)."""
    for i, statement in enumerate(function.body):
        yield from _walk_statement(statement, (*base, "body", i))


def _blocks(function: ast.FunctionDef, base: Where,
            nodes: list[tuple[Where, ast.AST]]) -> Iterator[tuple[Where, list[ast.stmt]]]:
    """Every statement list of the function (its body, loop and branch bodies), with the
    list's path."""
    yield (*base, "body"), function.body
    for path, node in nodes:
        if isinstance(node, ast.FunctionDef):
            continue
        for field in ("body", "orelse"):
            body = getattr(node, field, None)
            if isinstance(body, list) and body and isinstance(body[0], ast.stmt):
                yield (*path, field), body


def _keep(found: list[Mutant], seen: set[str], module: _Module, path: Where, node: ast.AST,
          edit: Edit) -> None:
    """Apply `edit` at `path` (in place, undone before returning); keep the mutant unless an
    earlier one made the same module."""
    tree = module.tree
    parent: Any = tree
    enclosing: ast.stmt | None = None
    for step in path[:-1]:
        parent = parent[step] if isinstance(step, int) else getattr(parent, step)
        if isinstance(parent, ast.stmt):
            enclosing = parent
    last = path[-1]
    replacement = edit.replacement
    new = replacement if isinstance(replacement, list) else [replacement]
    for statement in new:
        if isinstance(statement, ast.stmt):
            _locate(statement, node)
    before = ast.unparse(node) if isinstance(replacement, list) else \
        ast.unparse(_statement_at(tree, path) or node)
    if isinstance(last, int):
        span = 2 if edit.operator == "swap_steps" else 1
        kept = parent[last:last + span]
        parent[last:last + span] = new
    else:
        kept = getattr(parent, last)
        setattr(parent, last, replacement)
    if isinstance(last, int) and kept and all(isinstance(s, ast.stmt) for s in [*kept, *new]):
        old, changed = cast(list[ast.stmt], kept), cast(list[ast.stmt], new)
    else:
        assert enclosing is not None, "an expression outside every statement"
        old = changed = [enclosing]
    try:
        text = module.text(old, changed)
        after = _shown(edit) if isinstance(replacement, list) else \
            ast.unparse(_statement_at(tree, path) or node)
    except (ValueError, TypeError, AttributeError):
        return
    finally:
        if isinstance(last, int):
            parent[last:last + len(new)] = kept
        else:
            setattr(parent, last, kept)
    if text in seen:
        return
    seen.add(text)
    found.append(Mutant(edit.operator, *shown_pair(head_line(before), head_line(after)),
                        text, edit.explains, head_line(before), head_line(after)))


def _locate(new: ast.AST, old: ast.AST) -> None:
    """Give a statement made here the position of the one it stands for (unparse reads it)."""
    for child in ast.walk(new):
        if "lineno" in child._attributes and not hasattr(child, "lineno"):
            ast.copy_location(child, old)


def _statement_at(tree: ast.Module, path: Where) -> ast.stmt | None:
    """The innermost statement on `path`: what a slip inside an expression is shown in."""
    node: Any = tree
    deepest = None
    for step in path:
        node = node[step] if isinstance(step, int) else getattr(node, step)
        if isinstance(node, ast.stmt):
            deepest = node
    return deepest


def _shown(edit: Edit) -> str:
    """The replacement as source ("" for a step left out)."""
    if edit.operator == "drop_step":
        return ""
    parts: list[ast.AST] = (list(edit.replacement) if isinstance(edit.replacement, list)
                            else [edit.replacement])
    if edit.operator == "unentered_with":  # the bare calls alone: the steps are unchanged
        parts = [p for p in parts if isinstance(p, ast.Expr) and isinstance(p.value, ast.Call)]
        parts = parts[:1]
    if edit.operator == "listed_once":  # the list made: the step after it is unchanged
        parts = parts[:1]
    return " ; ".join(_unparse(p) for p in parts)


def _unparse(node: ast.AST) -> str:
    """Source of a node made here, which has no positions yet."""
    node = copy.deepcopy(node)
    holder = (ast.Module([node], []) if isinstance(node, ast.stmt)
              else ast.Expression(cast(ast.expr, node)))
    return ast.unparse(ast.fix_missing_locations(holder))


SHOWN = 80
"""The most of a statement a hint shows."""


MOST_STATEMENTS = 1000
"""The most statements of a file read statement by statement (a part has a few dozen): past
that it is no part written by hand, and is read by its physical lines, which costs nothing
(a file of 99 nested blocks around 40,000 statements once cost the judge a minute)."""
BLOCKS = ("body", "orelse", "finalbody")


def statement_head(node: ast.stmt) -> str:
    """A statement's first line as `ast.unparse` writes it, its blocks left out before it is
    written (a compound statement's header costs its header, not its whole subtree)."""
    if any(getattr(node, field, None) for field in (*BLOCKS, "handlers", "cases")):
        node = copy.copy(node)
        for field in BLOCKS:
            if getattr(node, field, None):
                setattr(node, field, [ast.Pass()])
        for field in ("handlers", "cases"):
            if getattr(node, field, None):
                setattr(node, field, [])
    return head_line(ast.unparse(node))


def head_line(text: str) -> str:
    """A statement's first line (a compound statement's header), as a hint shows it."""
    return text.strip().splitlines()[0] if text.strip() else ""


def cut_line(text: str) -> str:
    """One statement cut to SHOWN characters."""
    return text if len(text) <= SHOWN else text[:SHOWN - 3] + "..."


def shown_pair(before: str, after: str) -> tuple[str, str]:
    """The two statements cut to SHOWN characters each, both from the same place: where they
    start to differ, less some context, so that a slip far along a long line stays in view."""
    if max(len(before), len(after)) <= SHOWN:
        return before, after
    same = next((i for i, (a, b) in enumerate(zip(before, after, strict=False)) if a != b),
                min(len(before), len(after)))
    start = max(0, same - SHOWN // 3)

    def cut(text: str) -> str:
        piece = ("..." if start else "") + text[start:]
        return piece if len(piece) <= SHOWN else piece[:SHOWN - 3] + "..."

    return cut(before), cut(after)


@functools.cache
def templates() -> dict[str, str]:
    """Each operator's sentence, from mutations.toml."""
    return {name: table["says"] for name, table in
            tomllib.loads(TEMPLATES_FILE.read_text()).items()}


def matching(candidates: Sequence[Mutant], outputs: Sequence[Any],
             wrong: Sequence[tuple[Case, Any]]) -> list[Mutant]:
    """The mutants whose outputs equal the candidate's on every one of the (up to MAX_CASES)
    wrong cases they ran on; `outputs[k][j]` is mutant k's {"value", "raised"} on case j
    (grader.probes.library.mutant_calls), no dict where the mutant did not run. None where
    the candidate's results hold no finite number in any case: NaN (0 / 0, a log of 0) comes
    of many slips alike, so a mutant that makes it too names no one slip."""
    if wrong and not any(_finite_anywhere(actual) for _, actual in wrong):
        return []
    found = []
    for mutant, runs in zip(candidates, outputs, strict=True):
        if isinstance(runs, list) and len(runs) == len(wrong) and all(
                isinstance(run, dict) and run.get("raised") is None
                and _same(actual, run.get("value"), case)
                for (case, actual), run in zip(wrong, runs, strict=True)):
            found.append(mutant)
    return found


def raising_alike(candidates: Sequence[Mutant], outputs: Sequence[Any], raised: dict[str, Any],
                  answered: Sequence[tuple[Case, Any]] = ()) -> list[Mutant]:
    """The mutants that raise the candidate's exception on its case, at a statement of the
    same shape as the candidate's line (names aside: `adj = adj + dP[k + 1]` is
    `adjoint = adjoint + dP[i + 1]`): either the statement the slip changed, or, with the
    very message the candidate's raise had, the statement the mutant raised at (a loop bound
    read from the wrong dimension raises where the loop indexes, not at the bound). An
    exception alone is weak evidence (every index pushed past the end raises IndexError); the
    line, or the line and the message, make it the slip; and the mutant must answer the
    cases the candidate `answered` (after the raising one in `outputs`) as the candidate did."""
    theirs = shape(raise_site(raised.get("where", ""))[1])
    if theirs is None:
        return []

    def alike(mutant: Mutant, run: dict[str, Any]) -> bool:
        if theirs in {shape(line) for line in (mutant.after, *mutant.explains)}:
            return True
        return run.get("message") == raised.get("message") \
            and shape(raise_site(run.get("where", ""))[1]) == theirs

    return [mutant for mutant, runs in zip(candidates, outputs, strict=True)
            if isinstance(runs, list) and len(runs) == 1 + len(answered)
            and isinstance(runs[0], dict) and runs[0].get("raised") == raised.get("type")
            and alike(mutant, runs[0]) and matching([mutant], [runs[1:]], answered)]


def raise_site(where: str) -> tuple[str, str]:
    """(the line, its code) of a raise's `where` ("exercises/part3_backward.py, line 27:
    <code>" gives ("line 27", "<code>")); empty where `where` names no line."""
    head, _, code = where.partition(": ")
    file, _, line = head.rpartition(", ")
    return (line, code) if file and line.startswith("line ") else ("", "")


def shape(code: str, renamed: bool = True) -> str | None:
    """A statement's syntax with its names numbered in order of appearance: two lines that
    differ only in what their variables are called have the same shape (with `renamed` False,
    the names are kept: the statement itself, spacing and parentheses aside). A compound
    statement's header (`for i in range(n):`) is read with an empty body. A line of ordinary
    length is parsed once: the ranking of mutants asks for the same lines' shapes at every
    failing check of every part (a long one, which only a hostile file has, every time, so
    that no file can fill the worker's memory with them)."""
    if len(code) > LONGEST_SHAPED:
        return None
    if len(code) > SHAPES_KEPT_UP_TO:
        return _shape(code, renamed)
    return _kept_shape(code, renamed)


SHAPES_KEPT_UP_TO = 500
"""The longest line whose shape is kept (characters)."""
LONGEST_SHAPED = 5000
"""The longest line given a shape at all: no statement written by hand is longer, and parsing
a line of tens of thousands of statements, at every failing check, costs the judge seconds."""


def _shape(code: str, renamed: bool) -> str | None:
    tree = parse_line(code)
    if tree is None:
        return None
    numbered: dict[str, str] = {}
    for node in ast.walk(tree):
        if renamed and isinstance(node, ast.Name):
            node.id = numbered.setdefault(node.id, f"v{len(numbered)}")
    return ast.dump(tree, annotate_fields=False)


_kept_shape = functools.lru_cache(maxsize=8192)(_shape)


def parse_line(code: str) -> ast.Module | None:
    """One line of code parsed, a compound statement's header with an empty body; None for
    an empty line or one that does not parse (the candidate's: anything at all, nested past
    the parser too)."""
    text = code.strip()
    for attempt in (text, text + " pass") if text else ():
        try:
            return ast.parse(attempt)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            continue
    return None


def _same(actual: Any, value: Any, case: Case) -> bool:
    """The candidate's result is the mutant's, at the mutant's own scale. A comparison with the
    truth allows an absolute error of the dtype's tolerance for results below 1 in size, so
    two different tiny results (1e-13 and 4e-13, a step too small by different slips) would
    match: here both are measured in units of the mutant's largest entry first. A mutant that
    computes nothing (all zeros) then only matches a result that is exactly zero too."""
    try:
        if _all_zero(value) and not _all_zero(actual):
            return False
        size = _largest(value)
        if 0 < size < 1:
            actual, value = _scaled(actual, 1 / size), _scaled(value, 1 / size)
        return bool(tree_matches(actual, value, case.dtype, alike=True))
    except (ValueError, TypeError, IndexError):
        return False


def _finite_anywhere(tree: Any) -> bool:
    """Whether a result holds a finite number (arrays, numbers, and lists, tuples and dicts of
    them; anything else counts as holding one)."""
    if isinstance(tree, dict):
        return any(_finite_anywhere(v) for v in tree.values())
    if isinstance(tree, list | tuple):
        return any(_finite_anywhere(v) for v in tree)
    if isinstance(tree, np.ndarray | float) and not isinstance(tree, bool):
        values = np.asarray(tree)
        return values.dtype.kind not in "fc" or bool(np.isfinite(values).any())
    return True


def _largest(tree: Any) -> float:
    """The largest finite magnitude among a result's numbers (0 for none)."""
    if isinstance(tree, dict):
        return max((_largest(v) for v in tree.values()), default=0.0)
    if isinstance(tree, list | tuple):
        return max((_largest(v) for v in tree), default=0.0)
    if isinstance(tree, np.ndarray | float | int) and not isinstance(tree, bool):
        values = np.abs(np.asarray(tree, dtype=np.float64))
        values = values[np.isfinite(values)]
        return float(values.max()) if values.size else 0.0
    return 0.0


def _scaled(tree: Any, factor: float) -> Any:
    """A result with its numbers multiplied by `factor`, its other leaves as they were."""
    if isinstance(tree, dict):
        return {k: _scaled(v, factor) for k, v in tree.items()}
    if isinstance(tree, list | tuple):
        return type(tree)(_scaled(v, factor) for v in tree)
    if isinstance(tree, np.ndarray | float | int) and not isinstance(tree, bool):
        return np.asarray(tree, dtype=np.float64) * factor
    return tree


def _all_zero(tree: Any) -> bool:
    if isinstance(tree, dict):
        return all(_all_zero(v) for v in tree.values())
    if isinstance(tree, list | tuple):
        return all(_all_zero(v) for v in tree)
    try:
        return not np.any(np.asarray(tree, dtype=np.float64))
    except (TypeError, ValueError):
        return False


def diagnosis(round_: Round, part_id: str, flavor: str, call: dict[str, Any],
              wrong: Sequence[tuple[Case, Any]], what: str,
              raised: dict[str, Any] | None = None,
              workspace: str | None = None,
              truth: Callable[[Case], Any] | None = None,
              compared: Callable[[Any], Any] = lambda value: value,
              elsewhere: Sequence[tuple[Case, Any]] = (),
              rejected: tuple[Sequence[Case], str] | None = None) -> Diagnosis | None:
    """The second look of a check whose wrong results no known mistake explained: the
    reference part's mutants, run on the smallest wrong cases in children with no candidate
    code (in stages, likeliest first: see FIRST_STAGE, and by_evidence where the candidate's
    `workspace` is given), and the sentence that names the first whose results are the
    candidate's. With `raised` (what the candidate's call on the first case in `wrong` raised
    on valid input; the cases after it, with what the candidate answered), the first mutant
    that raises alike and answers alike (raising_alike) instead. None when the round has no
    reference for this flavor to mutate. With the cases' `truth` and the candidate's file, the
    last look is a Repair of that file (repair), a variant's result and the truth each taken
    through `compared` (the fields a check compares) first: a change that makes the call that
    raised answer right, with the other cases it raised on and those it answered wrong, names a
    crash's cause as it names a wrong value's. `elsewhere`: the code's other cases, each with
    its result (None where it raised); of those it answers right, one (_guard) is run with the
    wrong ones, and a slip or a change must answer it right too: a slip that explains the
    wrong results but not the right ones (a NaN made another way) is not the code's.
    `rejected`: malformed inputs (a few of them, see VALIDATION_CASES) and the error the
    contract asks for, which a change must still reject so: a guard left out, or one that
    compares a size with itself, lets a valid input through and validates nothing."""
    texts = _part_texts(round_, part_id, flavor, workspace)
    if texts is None:
        return None
    source, reference = texts
    try:
        found = mutants(reference)
    except (SyntaxError, ValueError):
        return None
    found = by_evidence(found, source, reference)
    if not wrong:
        return None
    # With `raised`, the raising case comes first and the caller chose the cases after it.
    right = [(case, value) for case, value in elsewhere
             if truth is not None and _answers_right(case, value, truth, compared)]
    chosen = list(wrong) if raised else [*chosen_cases(wrong), *_guard(right)]
    stages = _stages({**call, "cases": [c.data() for c, _ in chosen],
                      "reference": [str(round_.folder), part_id], "original": reference}, found)

    unquoted: dict[str, str] = {}

    def name(observations: list[Any]) -> str | None:
        if not all(isinstance(o, list) for o in observations):
            return None
        outputs = [output for observation in observations for output in observation]
        ran = found[:len(outputs)]
        matched = raising_alike(ran, outputs, raised, chosen[1:]) if raised else \
            matching(ran, outputs, chosen)
        if not matched:
            return None
        quoted = quote(matched[0], source, reference)
        said = describe(matched[0], what, quoted)
        if quoted is None:
            unquoted[said] = describe(matched[0], what, False)
        return said

    fix = None
    if truth is not None:
        fixed = _wrong_after_a_raise(chosen, [c for c, v in elsewhere if v is None], truth,
                                     compared) if raised else list(chosen)
        if fixed:  # then every other case of the check: a fix is right on them all
            taken = {id(case) for case, _ in fixed}
            fixed += [pair for pair in elsewhere if id(pair[0]) not in taken][:CONFIRMING]
        malformed, error = rejected if rejected and fixed else ((), "ValueError")
        guards = [(case, None) for case in list(malformed)[:VALIDATION_CASES]]
        kept = range(len(fixed), len(fixed) + len(guards))
        fix = repair(source, reference, call, [*fixed, *guards], truth, what, compared,
                     raising=kept, error=error, guarding=kept)
    if not found and fix is None:
        return None
    # With every slip ruled out by the file (by_evidence), no stage runs: the repair alone.
    return Diagnosis("mutant_calls", stages, ("sources", "cases"), name,
                     lasting=lambda answer: answer != OUT_OF_TIME, repair=fix,
                     unsettled=unquoted.get)


def _part_texts(round_: Round, part_id: str, flavor: str,
                workspace: str | None) -> tuple[str | None, str] | None:
    """(the candidate's file of the part, None without a workspace or a readable file; the
    reference's), or None where the round has no reference for this flavor."""
    part = round_.part(part_id)
    try:
        reference = (round_.reference_dir(flavor) / part.file).read_text()
    except OSError:
        return None
    return (source_text(Path(workspace) / "exercises" / part.file) if workspace else None,
            reference)


CONFIRMING = 48
"""How many of a check's other cases a repair of its values must also answer right, after the
wrong ones (a variant that is not right on those stops at the first, so only a fix runs them
all): a change right on the few cases the repair chose and wrong elsewhere is no fix."""
VALIDATION_CASES = 16
"""Of a validation's malformed inputs, and of its well-formed ones, how many a fix is tried on
besides the one the code got wrong: as many as a validation has, or nearly (they are small,
and a fix must reject each for its own reason: on three, a guard reading `eps` for `momentum`
rejected them by another guard's doing and passed for the fix)."""


def validation_repair(round_: Round, part_id: str, flavor: str, call: dict[str, Any],
                      first: Case, malformed: Sequence[Case], valid: Sequence[Case],
                      what: str, workspace: str | None, error: str) -> Repair | None:
    """The Repair of a validation the candidate's file gets wrong: `first` (a malformed input
    let through, or a well-formed one rejected) and a few of each kind, a fix rejecting every
    malformed one with `error` and none of the well-formed ones. None without well-formed
    inputs, where a change that rejects everything would pass."""
    texts = _part_texts(round_, part_id, flavor, workspace)
    if texts is None or not valid:
        return None
    source, reference = texts
    bad = [c for c in malformed if c is not first][:VALIDATION_CASES]
    good = [c for c in valid if c is not first][:VALIDATION_CASES]
    chosen = [first, *bad, *good]
    raising = [i for i, case in enumerate(chosen) if any(case is c for c in malformed)]
    return repair(source, reference, call, [(case, None) for case in chosen],
                  lambda case: None, what, raising=raising, error=error, keep=_in_a_test)


def _in_a_test(variant: Mutant) -> bool:
    """Whether a variant changes a test (an `if`, `elif`, `while` or `assert` line, or the
    expression of a conditional): where a validation decides what it rejects, and the few
    variants a validation's repair tries of the hundreds a file makes."""
    head = variant.line_before.lstrip()
    return head.startswith(("if ", "elif ", "while ", "assert ")) or " if " in head


def _answers_right(case: Case, value: Any, truth: Callable[[Case], Any],
                   compared: Callable[[Any], Any]) -> bool:
    """Whether the code's result on `case` (None where it raised) passes as the truth does."""
    return value is not None and _right(value, compared(truth(case)), case, compared)


def _guard(right: Sequence[tuple[Case, Any]]) -> list[tuple[Case, Any]]:
    """The case the code answers right that a slip named must answer right too: the smallest
    full one (_full), else the largest, since an input of one row or an empty one tells few
    slips apart; none where the code answers none right."""
    if not right:
        return []
    def size(pair: tuple[Case, Any]) -> int:
        return sum(int(np.size(v)) for v in pair[0].inputs.values())
    full = [pair for pair in right if _full(pair[0])]
    return [min(full, key=size) if full else max(right, key=size)]


def _wrong_after_a_raise(chosen: Sequence[tuple[Case, Any]], raised_too: Sequence[Case],
                        truth: Callable[[Case], Any],
                        compared: Callable[[Any], Any]) -> list[tuple[Case, Any]]:
    """The cases a repair of code that raised is run on: the one it raised on, then, chosen as
    any wrong cases are, the others it raised on and those it answered wrong, then as many of
    those it answered right as make MAX_CASES (the fix must keep them right); none where there
    are fewer, since on one case alone a change that cannot be the fix (a maximum of one
    operand for a maximum of two) may answer right by chance."""
    raised, *answered = chosen
    answers_right = [_answers_right(case, value, truth, compared) for case, value in answered]
    right = [pair for pair, ok in zip(answered, answers_right, strict=True) if ok]
    wrong = [pair for pair, ok in zip(answered, answers_right, strict=True) if not ok]
    cases = [raised, *chosen_cases([*wrong, *((case, None) for case in raised_too)])]
    cases += right[:max(0, MAX_CASES - len(cases))]
    return cases if len(cases) >= MAX_CASES else []


REPAIRABLE_CHARS = 16 * 1024
"""The longest candidate file whose one-change variants are made: a part is a few KiB, and
making the variants of a file costs the judge time in proportion to it."""


def repair(source: str | None, reference: str, call: dict[str, Any],
           chosen: Sequence[tuple[Case, Any]], truth: Callable[[Case], Any],
           what: str, compared: Callable[[Any], Any] = lambda value: value,
           raising: Sequence[int] = (), error: str = "ValueError",
           keep: Callable[[Mutant], bool] = lambda variant: True,
           guarding: Sequence[int] = ()) -> Repair | None:
    """The candidate's own file, each one-change variant the operators make of it, run on the
    `chosen` wrong cases (in stages, likeliest first), and the sentence that names the first
    whose results are the truth on every one of them: the line the candidate wrote and the
    line that makes those cases right. A slip in code shaped nothing like the reference (a
    loop where the reference has one product, einsum, a while loop) is then named in the
    candidate's own lines; a change that moves a step, or leaves one out, in a sentence that
    says so (mutations.toml's repair_*), and one that moves a step into or out of a loop or a
    block not named at all (no sentence says it in the candidate's terms). None without a
    file, for one the reference itself, or one too long; no stages for one not parseable.
    `raising`: the chosen cases a fix must reject with `error`, raised by a `raise` statement
    of the file's (a validation's malformed inputs; numpy's own ValueError from a broken
    matmul is no validation), where the others it must answer without a raise, their values
    unread (a truth of None). `keep`: which variants to try. `guarding`: of the `raising`
    cases, those a fix must reject only where the code rejects them now (a check of values'
    repair keeps the guards that work, and needs to fix no other)."""
    if source is None or source == reference or len(source) > REPAIRABLE_CHARS or not chosen:
        return None
    text = source
    rejected = frozenset(raising)

    @functools.cache
    def found() -> tuple[Mutant, ...]:
        """The variants, made only where the repair is run: most failures are named before."""
        try:
            return tuple(variant for variant in mutants(text) if keep(variant))
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return ()

    def stages() -> tuple[dict[str, Any], ...]:
        # The cases the code is not known to answer wrong: those it answers right already (a
        # raise's guards), where a variant that answers as the code does is right, and those
        # it raised on or never reached (a probe stops at the first raise), where the code's
        # own answer in the child may well be right.
        # Where only a raise is read, every case a fix must not reject is one where the
        # code's own answer (no raise) may be right.
        right = [i for i, (case, value) in enumerate(chosen)
                 if i not in rejected and (value is None
                                           or _answers_right(case, value, truth, compared))]
        expects = {"raising": sorted(rejected), "guarding": sorted(guarding),
                   "error": error} if rejected else {}
        return _stages({**call, "cases": [c.data() for c, _ in chosen], "reference": [],
                        "original": text, "right": right, **expects}, found())

    def fixed(index: int, run: Any, want: Any, case: Case) -> bool:
        if not isinstance(run, dict):
            return False
        if index in guarding:  # rejected where the code rejects it now (or left free)
            return run.get("guard") in ("free", "held")
        if index in rejected:  # by a `raise` of the file's, not a library call that broke
            _, statement = raise_site(str(run.get("where", "")))
            return run.get("raised") is not None and statement.startswith("raise")
        return run.get("raised") is None and (want is None
                                              or _right(run.get("value"), want, case, compared))

    def name(observations: list[Any]) -> str | None:
        outputs = [output for observation in observations if isinstance(observation, list)
                   for output in observation]
        said = templates()
        expected = [None if i in rejected else compared(truth(case))
                    for i, (case, _) in enumerate(chosen)]
        for variant, runs in zip(found(), outputs, strict=False):
            own = f"repair_{variant.operator}"
            sentence = own if own in said else \
                "repair_every" if variant.operator.startswith("every_") else "repair"
            if sentence in said and isinstance(runs, list) and len(runs) == len(chosen) and all(
                    fixed(i, run, want, case) for i, ((case, _), run, want)
                    in enumerate(zip(chosen, runs, expected, strict=True))):
                return describe(Mutant(sentence, variant.before, variant.after, ""), what)
        return None

    return Repair("mutant_calls", stages, name)


def _right(value: Any, expected: Any, case: Case,
           compared: Callable[[Any], Any] = lambda value: value) -> bool:
    """Whether a variant's result (taken through `compared`) passes as the truth does in a
    check of values. The value came from a child running candidate code, which can answer
    anything (an integer too large for a float, an object no comparison knows, a table without
    the fields compared): whatever cannot be compared is not right."""
    try:
        return bool(tree_matches(compared(value), expected, case.dtype))
    except Exception:  # noqa: BLE001 - candidate data; only a hint depends on it
        return False


EVIDENCE_BYTES = 256 * 1024
"""How much of a candidate's file is read judge side (a part is a few KiB)."""


def source_text(path: Path) -> str | None:
    """The start of a file's text, undecodable bytes replaced; None where it cannot be read
    (or is no regular file: a FIFO at a part's name would block the worker)."""
    data = regular_file_bytes(path, EVIDENCE_BYTES)
    return None if data is None else data.decode(errors="replace")


MOVES = frozenset({"swap_steps", "hoisted_step"})
"""The slips that move statements and change none: judged by the order the file holds them in."""


@functools.lru_cache(maxsize=16)
def _lines(source: str) -> tuple[tuple[str, ...], tuple[str | None, ...],
                                 tuple[str | None, ...]]:
    """A file's statements, each as the first line of its source as `ast.unparse` writes it
    (a statement over several lines is one; a compound statement is its header), as mutants
    show theirs; then their shapes names aside, and as written (`shape`). A file that does not
    parse gives its physical lines. Parsed once per file text, for every failing check of a
    part (a file is up to EVIDENCE_BYTES of anything)."""
    try:
        tree = ast.parse(source)
        nodes = list(itertools.islice((n for n in ast.walk(tree) if isinstance(n, ast.stmt)),
                                      MOST_STATEMENTS + 1))
        if len(nodes) > MOST_STATEMENTS:
            raise ValueError("no file written by hand")
        texts = tuple(statement_head(node) for node in nodes)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        texts = tuple(line.strip() for line in source.splitlines())
    return (texts, tuple(shape(text) for text in texts),
            tuple(shape(text, renamed=False) for text in texts))


def by_evidence(found: Sequence[Mutant], source: str | None,
                reference: str) -> tuple[Mutant, ...]:
    """The mutants the candidate's own file leaves possible, those it bears out first. Borne
    out: the file holds more copies of the slip's line, as written, than the reference does
    (`if a.shape == 0:` where the reference tests `a.size`), or the two statements a slip
    moves stand in the file in the slip's order. Then: a changed line the file holds names
    aside, or a step left out that the file lacks; then slips at lines the file lacks; then
    the rest. Ruled out: a slip at a line the file holds as often as the reference, as written,
    without more copies of the slip's line (`zero_grad()` for `step()` in a file that has one
    of each, as the reference), a move whose statements stand in the reference's order, and a
    return moved into a loop where no loop of the file ends with one.
    Each group keeps its order (PRIORITY). Two slips often give the same wrong results on every
    case run (a test that is never true, and the test left out), and the hint must name the one
    the candidate made, never quote as theirs a line that is nowhere in their code, nor blame
    one that is right. The file is only read."""
    if source is None:
        return tuple(found)
    _, held_shapes, held_lines = _lines(source)
    held, written, theirs = set(held_shapes) - {None}, _written(source), _written(reference)

    def rank(mutant: Mutant) -> int:
        if mutant.operator in MOVES:
            return _order(mutant, held_lines)
        if mutant.operator == "return_in_loop":  # its lines read alike: the file's structure
            return 0 if _returns_in_a_loop(source) else 4
        before, after = shape(mutant.line_before), shape(mutant.line_after)
        was, now = shape(mutant.line_before, renamed=False), shape(mutant.line_after,
                                                                    renamed=False)
        if _holds_slip(mutant, source, reference):
            return 0
        if was is not None and written[was] >= theirs[was] > 0 \
                and (now is None or written[now] <= theirs[now]):
            return 4
        if mutant.operator == "drop_step":
            return 1 if before not in held else 3
        if after != before and after in held:
            return 1
        return 2 if before not in held else 3

    ranked = sorted(((rank(m), m) for m in found), key=lambda pair: pair[0])
    return tuple(m for r, m in ranked if r < 4)


@functools.lru_cache(maxsize=16)
def _returns_in_a_loop(source: str) -> bool:
    """Whether a loop of the file ends its body with a return (the slip return_in_loop makes),
    read from its syntax tree; False for a file that does not parse."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    return any(isinstance(node, ast.For | ast.While) and isinstance(node.body[-1], ast.Return)
               for node in ast.walk(tree))


@functools.lru_cache(maxsize=16)
def _written(source: str) -> Counter[str | None]:
    """How many of a file's statements are each line as written (see _lines)."""
    return Counter(_lines(source)[2])


def _holds_slip(mutant: Mutant, source: str, reference: str) -> bool:
    """Whether the file holds the slip's line, as written, more often than the reference."""
    now = shape(mutant.line_after, renamed=False)
    return now is not None and _written(source)[now] > _written(reference)[now]


def _order(mutant: Mutant, held_lines: tuple[str | None, ...]) -> int:
    """A move's rank: its two statements' first lines (`line_after` shows them in the slip's
    order) found in the file as written, in the slip's order (0) or the reference's (4);
    2 where the file does not show both."""
    first, _, second = mutant.line_after.partition(" ; ")
    lines = shape(first, renamed=False), shape(second, renamed=False)
    if None in lines or lines[0] == lines[1] or not all(line in held_lines for line in lines):
        return 2
    return 0 if held_lines.index(lines[0]) < held_lines.index(lines[1]) else 4


def chosen_cases(wrong: Sequence[tuple[Case, Any]]) -> list[tuple[Case, Any]]:
    """The wrong cases to run the mutants on: the smallest of each structure (the number of
    dimensions of each input), smallest first, up to MAX_STRUCTURES of them, then the smallest
    of the rest until there are MAX_CASES, and for each of those structures the smallest full
    one (_full) where none of those is (else the smallest full one of any). A slip can show
    alike on every input of one structure and differently on another: a difference of
    dimensions reversed (len(shape) - grad.ndim) agrees with a bound off by one wherever the
    difference is 0 or 1, and only an input two dimensions short tells them apart; and on an
    axis of one entry a reduction over it is no reduction (a max over the rows of a (3, 1)
    error, then a mean, is the max)."""
    by_size = sorted(wrong, key=lambda pair: sum(np.size(v) for v in pair[0].inputs.values()))
    seen: set[tuple[tuple[str, int], ...]] = set()
    first: list[tuple[Case, Any]] = []
    rest: list[tuple[Case, Any]] = []
    for pair in by_size:
        (rest if _structure(pair[0]) in seen or len(first) == MAX_STRUCTURES
         else first).append(pair)
        seen.add(_structure(pair[0]))
    chosen = first + rest[:max(0, MAX_CASES - len(first))]
    for case, _ in first:
        if not any(_full(c) and _structure(c) == _structure(case) for c, _ in chosen):
            chosen += [pair for pair in rest
                       if _structure(pair[0]) == _structure(case) and _full(pair[0])][:1]
    if not any(_full(case) for case, _ in chosen):
        chosen += [pair for pair in rest if _full(pair[0])][:1]
    return chosen


def _structure(case: Case) -> tuple[tuple[str, int], ...]:
    """The number of dimensions of each input, by name."""
    return tuple(sorted((name, np.ndim(v)) for name, v in case.inputs.items()))


def _full(case: Case) -> bool:
    """Whether every axis of every input has two entries or more. On an axis of one entry
    different code agrees (a stack of one matrix concatenated is that matrix; a sum over it
    is a squeeze), so a slip named on such inputs alone may be another: the cases a mutant
    or a repair is run on hold a full one where a wrong case is full."""
    return all(size >= 2 for value in case.inputs.values() for size in np.shape(value))


FIRST_STAGE = 16
"""How many mutants the first stage of a diagnosis runs; each later stage runs twice as many as
the one before. The mutants come likeliest first (PRIORITY), and half the slips that known
solutions make are named within the first 16 of 70 to 400 mutants: a failing check's hint then
costs one small child, not every mutant."""


def _stages(shared: dict[str, Any], found: Sequence[Mutant]) -> tuple[dict[str, Any], ...]:
    """mutant_calls' arguments for each stage over `found` (stage_bounds): the `shared` ones,
    the stage's sources, and its share of MUTANTS_CPU_S."""
    return tuple({**shared, "sources": [m.source for m in found[start:end]],
                  "budget_s": MUTANTS_CPU_S * (end - start) / len(found)}
                 for start, end in stage_bounds(len(found)))


def stage_bounds(count: int) -> list[tuple[int, int]]:
    """[start, end) of each stage over `count` mutants: FIRST_STAGE, then doubling."""
    bounds, start, size = [], 0, FIRST_STAGE
    while start < count:
        bounds.append((start, min(count, start + size)))
        start, size = start + size, size * 2
    return bounds


QUOTED = ": `{after}` where it should be `{before}`"
UNQUOTED = " in what should read `{before}`"
"""A sentence's quote of the slip's line, and what stands for it where the candidate's file
holds no such line: the slip is named, and no line the candidate did not write is shown as
theirs."""


def describe(mutant: Mutant, what: str,
             quoted: tuple[str, str] | None | bool = True) -> str:
    """The hint that names a mutant's slip, from its operator's sentence ("Your {what} {is}": a
    result named "the gradients" reads as "Your gradients are"). `quoted`: the (before, after)
    to show (see quote), True for the mutant's own, None for none (see QUOTED), False for the
    slip's kind alone, no statement at all (said beside a line a repair found; nothing for a
    sentence that names its slip by the statements alone, as drop_step's does)."""
    what = what.removeprefix("the ")
    sentence = templates()[mutant.operator]
    if quoted is False and QUOTED not in sentence:
        return ""  # a sentence of its own shape names the slip by its statements alone
    if quoted is None and QUOTED not in sentence:
        quoted = True  # a sentence of its own shape: it shows the statements as the slip has them
    before, after = (mutant.before, mutant.after) if quoted is True else quoted or ("", "")
    if quoted is False:
        sentence = sentence.replace(QUOTED, "")
    elif not quoted:
        sentence, before = sentence.replace(QUOTED, UNQUOTED), mutant.before
    return sentence.format(what=what, before=before, after=after,
                           **{"is": "are" if plural(what) else "is"}).strip()


def quote(mutant: Mutant, source: str | None, reference: str) -> tuple[str, str] | bool | None:
    """What a hint may show of the slip: True (the mutant's own lines) where the candidate's
    file holds the slip's line as written more often than the reference does, or there is no
    file to read; where it holds it under names of its own, that line, and the statement it
    should be in the same names (`adj = adj + dP[k + 1]` where it should be `adj = adj +
    dP[k]`), unless that statement would read a name the file binds nowhere else; None where
    it holds no such line."""
    if source is None or mutant.operator in MOVES:
        return True  # a move shows the statements it moves, judged by their order (by_evidence)
    if _holds_slip(mutant, source, reference):
        return True
    texts, shapes, _ = _lines(source)
    wanted = shape(mutant.line_after)
    own = next((text for text, found in zip(texts, shapes, strict=True)
                if wanted is not None and found == wanted), None)
    renamed = _renamed(mutant.line_before, mutant.line_after, own) if own else None
    if not renamed or not own or _reads_unbound(renamed, own, source):
        return None
    return shown_pair(renamed, own)


def _reads_unbound(fix: str, own: str, source: str) -> bool:
    """Whether the statement `fix`, put in place of the file's `own`, would read a name the
    file binds nowhere but in `own` itself (`new = a * new + b` where only that line binds
    `new`), or one it binds nowhere at all that `own` does not read either (the reference's
    `dlogits` in a file that calls it `d`): a fix that cannot run, so no fix to show."""
    def loads_and_stores(text: str) -> tuple[set[str], set[str]]:
        tree = parse_line(text)
        names = [n for n in ast.walk(tree) if isinstance(n, ast.Name)] if tree else []
        return ({n.id for n in names if isinstance(n.ctx, ast.Load)},
                {n.id for n in names if isinstance(n.ctx, ast.Store)})

    reads, _ = loads_and_stores(fix)
    read_here, binds_here = loads_and_stores(own)
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    bound = bindings(tree)
    return any(bound[name] <= 1 for name in reads & binds_here) or any(
        not bound[name] and not hasattr(builtins, name) for name in reads - read_here)


def bindings(tree: ast.AST, imports: bool = True) -> Counter[str]:
    """How many times a file binds each name itself: assigned or deleted, a parameter, a
    definition, and with `imports` an import's name."""
    bound = Counter(n.id for n in ast.walk(tree) if isinstance(n, ast.Name)
                    and isinstance(n.ctx, ast.Store | ast.Del))
    bound.update(a.arg for a in ast.walk(tree) if isinstance(a, ast.arg))
    bound.update(n.name for n in ast.walk(tree)
                 if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef))
    if imports:
        bound.update((a.asname or a.name).split(".")[0] for n in ast.walk(tree)
                     if isinstance(n, ast.Import | ast.ImportFrom) for a in n.names)
    return bound


def _renamed(before: str, after: str, own: str) -> str | None:
    """`before` in the names `own` uses where the slip's line `after` uses others (the two
    have one shape, so their names pair up in order); None where they do not pair."""
    def names(text: str) -> tuple[ast.Module, list[ast.Name]] | None:
        tree = parse_line(text)
        return None if tree is None else (
            tree, [n for n in ast.walk(tree) if isinstance(n, ast.Name)])

    pairs, mine, target = names(after), names(own), names(before)
    if pairs is None or mine is None or target is None or len(pairs[1]) != len(mine[1]):
        return None
    mapping: dict[str, str] = {}
    for theirs, ours in zip(pairs[1], mine[1], strict=True):
        if mapping.setdefault(theirs.id, ours.id) != ours.id:
            return None
    for node in target[1]:
        node.id = mapping.get(node.id, node.id)
    return head_line(ast.unparse(target[0]))


def plural(name: str) -> bool:
    """Whether a result's name takes "are": a tuple of results ("(dA, dB)"), two joined by
    "and", or a plural noun ("gradients", "new params"; not "loss", nor a bare symbol like
    "dW" or a call like "combine((a1, b1), (a2, b2))")."""
    if name.startswith("(") and "," in name or " and " in name:
        return True
    last = name.split()[-1] if name.split() else name
    return last.isalpha() and last.islower() and last.endswith("s") and not last.endswith("ss")
