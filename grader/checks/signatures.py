"""The defaults a function's signature gives, read from source text (judge side: nothing runs).

A default is part of a function's contract: a caller who leaves `eps` out relies on the value
the stub's signature gives. Cases pass every argument, so a changed default computes right on
each of them; comparing the candidate's signature with the reference's finds it.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Any

_UNREADABLE = object()
"""A default that is no literal (a name, a call): not compared."""


@dataclass(frozen=True)
class ChangedDefault:
    """A parameter whose default differs from the reference's: `yours` is None where the
    candidate's signature gives it none."""

    parameter: str
    yours: str | None
    contract: str

    def describe(self, function: str) -> str:
        if self.yours is None:
            return (f"{function}'s {self.parameter} has no default; the stub's signature gives "
                    f"{self.parameter} = {self.contract}")
        return (f"{function}'s {self.parameter} defaults to {self.yours}; the stub's signature "
                f"gives {self.parameter} = {self.contract}")


def changed_defaults(source: str, reference: str, function: str) -> list[ChangedDefault]:
    """The parameters of `function` whose literal default in `source` differs from the one in
    `reference` (or is missing). Nothing where either file does not parse, either defines the
    function other than by a plain `def` at module level, the candidate's takes *args or
    **kwargs, or a default is no literal."""
    theirs, ours = _defaults(source, function), _defaults(reference, function)
    if theirs is None or ours is None:
        return []
    parameters, given = theirs
    changed = []
    for name, (value, text) in ours[1].items():
        if value is _UNREADABLE or name not in parameters:
            continue
        if name not in given:
            changed.append(ChangedDefault(name, None, text))
            continue
        yours, shown = given[name]
        if yours is not _UNREADABLE and not _same(yours, value):
            changed.append(ChangedDefault(name, shown, text))
    return changed


Defaults = tuple[frozenset[str], dict[str, tuple[Any, str]]]
"""A function's parameter names, and its defaults by name: (value, as written)."""


def _defaults(source: str, function: str) -> Defaults | None:
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return None
    found = [node for node in tree.body
             if isinstance(node, ast.FunctionDef) and node.name == function]
    if len(found) != 1:
        return None
    arguments = found[0].args
    if arguments.vararg or arguments.kwarg:
        return None
    constants = _module_constants(tree)
    positional = [*arguments.posonlyargs, *arguments.args]
    pairs = list(zip(positional[len(positional) - len(arguments.defaults):],
                     arguments.defaults, strict=True))
    pairs += [(a, d) for a, d in zip(arguments.kwonlyargs, arguments.kw_defaults, strict=True)
              if d is not None]
    names = frozenset(a.arg for a in [*positional, *arguments.kwonlyargs])
    return names, {a.arg: (_literal(d, constants), ast.unparse(d)) for a, d in pairs}


def _module_constants(tree: ast.Module) -> dict[str, ast.expr]:
    """Names the module binds once, at its top level, to a value (`_EPS = 1e-6`): a default
    may name one."""
    bound: dict[str, list[ast.expr]] = {}
    top = {id(node) for node in tree.body}
    for node in ast.walk(tree):
        targets = node.targets if isinstance(node, ast.Assign) else \
            [node.target] if isinstance(node, ast.AnnAssign | ast.AugAssign) else []
        for target in targets:
            if isinstance(target, ast.Name):
                bound.setdefault(target.id, []).append(
                    node.value if isinstance(node, ast.Assign | ast.AnnAssign) and node.value
                    and id(node) in top else target)
    return {name: values[0] for name, values in bound.items()
            if len(values) == 1 and not isinstance(values[0], ast.Name)}


def _literal(node: ast.expr, constants: dict[str, ast.expr] | None = None) -> Any:
    if isinstance(node, ast.Name) and constants and node.id in constants:
        node = constants[node.id]
    try:
        return ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return _UNREADABLE


def _same(a: Any, b: Any) -> bool:
    """Equal values: numbers by value (1e-5 and 0.00001, 1 and 1.0, True and 1 compute the
    same), anything else of one type."""
    if isinstance(a, int | float | complex) and isinstance(b, int | float | complex):
        return a == b
    return type(a) is type(b) and a == b
