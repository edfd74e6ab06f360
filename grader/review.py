"""The review scan: constructs no solution needs, flagged for a coach to read.

A grader facing submissions written to cheat can hide its judge from the code under test, but
a person reading the code sees what it tried. This scan points that person at the lines worth
reading: each Python file of a submission is parsed with `ast` (never imported, never run) and
every use of a construct that grader/review_rules.toml lists is flagged with its file, line,
what was used and the rule's reason. Names are followed through imports and simple aliases
(`import os as o`, `from os import fork`, `f = os`, `getattr(os, "fork")`,
`sys.modules["os"]`), because a cheat would rename what it uses; a file's own definitions
shadow builtins (a parameter called `compile` is not the builtin). Only string literals are
read as text, and only for the rule's `strings`, so prose that mentions "subprocess" is not a
flag. Flags change no score: they are evidence for a person, and a false alarm costs a reading.
"""

from __future__ import annotations

import ast
import builtins
import tomllib
import warnings
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from fnmatch import fnmatchcase
from functools import cache, cached_property
from pathlib import Path
from typing import TypedDict

RULES_FILE = Path(__file__).resolve().parent / "review_rules.toml"
NOT_PARSED = "does-not-parse"
SHOWN_FLAGS = 5
STRING_SHOWN = 40
BUILTIN_NAMES = frozenset(dir(builtins))


class FlagDoc(TypedDict):
    """One flag, as `grade --json` carries it in a submission's `flags`."""

    file: str
    line: int
    rule: str
    construct: str
    reason: str


@dataclass(frozen=True)
class Rule:
    """One entry of review_rules.toml (its header says what each list matches)."""

    id: str
    reason: str
    names: tuple[str, ...] = ()
    attributes: tuple[str, ...] = ()
    builtins: tuple[str, ...] = ()
    writes: tuple[str, ...] = ()
    strings: tuple[str, ...] = ()

    @cached_property
    def patterns(self) -> tuple[str, ...]:
        return self.names + tuple(f"builtins.{name}" for name in self.builtins)

    def reaches(self, dotted: str) -> bool:
        """Whether a dotted name, or a module or object above it, is one of the rule's."""
        parts = dotted.split(".")
        return any(fnmatchcase(".".join(parts[:n]), pattern)
                   for n in range(1, len(parts) + 1) for pattern in self.patterns)


@cache
def rules() -> tuple[Rule, ...]:
    """The rules, read once; the file ships inside the package."""
    data = tomllib.loads(RULES_FILE.read_text(encoding="utf-8"))
    loaded = tuple(Rule(**{key: tuple(value) if isinstance(value, list) else value
                           for key, value in entry.items()}) for entry in data["rule"])
    if NOT_PARSED not in {rule.id for rule in loaded}:
        raise RuntimeError(f"{RULES_FILE} has no rule {NOT_PARSED!r}")
    return loaded


def _rule(rule_id: str) -> Rule:
    return next(rule for rule in rules() if rule.id == rule_id)


def _constant_str(node: ast.AST | None) -> str | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) \
        else None


def _getattr_name(node: ast.AST) -> tuple[ast.AST, str] | None:
    """`getattr(obj, "name"[, default])` as (obj, name), where the name is a constant."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) \
            and node.func.id == "getattr" and len(node.args) in (2, 3):
        name = _constant_str(node.args[1])
        if name is not None:
            return node.args[0], name
    return None


class _Names:
    """What the names of one file stand for: imports and aliases, and the names the file binds
    itself (which shadow builtins)."""

    def __init__(self, tree: ast.Module) -> None:
        self.imported: dict[str, str] = {}
        self.star: list[str] = []
        self.bound: set[str] = set()
        aliases: list[tuple[str, ast.expr]] = []
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    local = alias.asname or alias.name.split(".")[0]
                    self.imported[local] = alias.name if alias.asname else local
            elif isinstance(node, ast.ImportFrom):
                for alias in node.names:
                    if alias.name == "*":
                        self.star.append(node.module or "")
                    else:
                        self.imported[alias.asname or alias.name] = \
                            _joined(node.module, alias.name)
            elif isinstance(node, ast.Assign) and len(node.targets) == 1 \
                    and isinstance(node.targets[0], ast.Name):
                aliases.append((node.targets[0].id, node.value))
            self.bound.update(_binds(node))
        # An alias of an alias resolves on a later round; a few rounds settle any real file.
        for _ in range(3):
            for name, value in aliases:
                dotted = self.dotted(value)
                if dotted is not None and dotted != self.imported.get(name):
                    self.imported[name] = dotted

    def dotted(self, node: ast.AST, calls: bool = True) -> str | None:
        """The dotted name an expression stands for (`o.fork` -> "os.fork"), or None when it
        is not reached from an import; with `calls`, an import by a string counts as the
        module it returns. Iterative: a hostile file may nest deeply."""
        steps: list[tuple[str, str]] = []
        while True:
            if isinstance(node, ast.Attribute):
                steps.append(("attr", node.attr))
                node = node.value
            elif (found := _getattr_name(node)) is not None:
                steps.append(("attr", found[1]))
                node = found[0]
            elif isinstance(node, ast.Subscript) and _constant_str(node.slice) is not None:
                steps.append(("item", _constant_str(node.slice) or ""))
                node = node.value
            elif isinstance(node, ast.Name) and node.id in self.imported:
                current: str | None = self.imported[node.id]
                break
            elif calls and (imported := self.imported_by_call(node)) is not None:
                current = imported
                break
            else:
                return None
        for kind, name in reversed(steps):
            if kind == "attr":
                current = f"{current}.{name}"
            elif current == "sys.modules":
                current = name
            else:
                return None
        return current

    def imported_by_call(self, node: ast.AST) -> str | None:
        """The module an import by a string returns: `__import__("os.path")` is os,
        `importlib.import_module("os.path")` is os.path."""
        if not isinstance(node, ast.Call) or not node.args \
                or (module := _constant_str(node.args[0])) is None:
            return None
        if isinstance(node.func, ast.Name) and node.func.id == "__import__" \
                and self.builtin("__import__"):
            return module.split(".")[0]
        return module if self.dotted(node.func, calls=False) == "importlib.import_module" \
            else None

    def builtin(self, name: str) -> bool:
        """Whether a bare name can only be the builtin of that name."""
        return name not in self.bound and name not in self.imported


def _joined(module: str | None, name: str) -> str:
    return f"{module}.{name}" if module else name


def _binds(node: ast.AST) -> Iterator[str]:
    """The names a node binds in the file (scopes aside: any binding shadows a builtin)."""
    if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store | ast.Del):
        yield node.id
    elif isinstance(node, ast.arg):
        yield node.arg
    elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        yield node.name
    elif isinstance(node, ast.ExceptHandler | ast.MatchAs | ast.MatchStar) and node.name:
        yield node.name
    elif isinstance(node, ast.MatchMapping) and node.rest:
        yield node.rest


class _Scan:
    """The flags of one parsed file, one per rule and line."""

    def __init__(self, file: str, tree: ast.Module) -> None:
        self.file = file
        self.names = _Names(tree)
        self.found: dict[tuple[int, str], FlagDoc] = {}
        for node in ast.walk(tree):
            self._visit(node)

    def flag(self, node: ast.AST, rule: Rule, construct: str) -> None:
        line = getattr(node, "lineno", 0)
        self.found.setdefault((line, rule.id), {"file": self.file, "line": line,
                                                "rule": rule.id, "construct": construct,
                                                "reason": rule.reason})

    def reached(self, node: ast.AST, dotted: str, construct: str | None = None) -> None:
        for rule in rules():
            if rule.reaches(dotted):
                self.flag(node, rule, construct or dotted)

    def _visit(self, node: ast.AST) -> None:
        if isinstance(node, ast.Import):
            for alias in node.names:
                self.reached(node, alias.name, f"import {alias.name}")
        elif isinstance(node, ast.ImportFrom):
            module = node.module or ""
            for alias in node.names:
                dotted = module if alias.name == "*" else _joined(node.module, alias.name)
                self.reached(node, dotted, f"from {'.' * node.level}{module} import "
                             f"{alias.name}")
        elif isinstance(node, ast.Attribute):
            self._attribute(node, node.value, node.attr, isinstance(node.ctx, ast.Store | ast.Del))
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
            self._name(node)
        elif isinstance(node, ast.Subscript) and (dotted := self.names.dotted(node)):
            self.reached(node, dotted)
        elif isinstance(node, ast.Call):
            self._call(node)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str | bytes):
            self._string(node, node.value)

    def _attribute(self, node: ast.AST, owner: ast.AST, attr: str, writes: bool) -> None:
        """`owner.attr` (or getattr/setattr with a constant name): a dotted name reached, an
        attribute named, or a module written to."""
        owner_name = self.names.dotted(owner)
        for rule in rules():
            if attr in rule.attributes:
                self.flag(node, rule, f".{attr}")
            if writes and owner_name is not None and owner_name in rule.writes:
                self.flag(node, rule, f"sets {owner_name}.{attr}")
        if owner_name is not None:
            self.reached(node, f"{owner_name}.{attr}")

    def _name(self, node: ast.Name) -> None:
        if node.id in self.names.imported:
            self.reached(node, self.names.imported[node.id])
            return
        if not self.names.builtin(node.id):
            return
        for rule in rules():
            if node.id in rule.builtins:
                self.flag(node, rule, node.id)
        if node.id not in BUILTIN_NAMES:
            for module in self.names.star:
                self.reached(node, _joined(module, node.id))

    def _call(self, node: ast.Call) -> None:
        """getattr/setattr/delattr with a constant name, and imports by a string."""
        func = node.func
        if isinstance(func, ast.Name) and func.id in ("setattr", "delattr") \
                and self.names.builtin(func.id) and len(node.args) >= 2 \
                and (attr := _constant_str(node.args[1])) is not None:
            self._attribute(node, node.args[0], attr, writes=True)
        elif (found := _getattr_name(node)) is not None and self.names.builtin("getattr"):
            self._attribute(node, found[0], found[1], writes=False)
        module = _constant_str(node.args[0]) if node.args else None
        if module is not None and self.names.imported_by_call(node) is not None:
            self.reached(node, module, f"import of {module!r} by its name")

    def _string(self, node: ast.Constant, value: str | bytes) -> None:
        said = value if isinstance(value, str) else value.decode("latin-1")
        for rule in rules():
            if any(text in said for text in rule.strings):
                shown = said if len(said) <= STRING_SHOWN else said[:STRING_SHOWN - 3] + "..."
                self.flag(node, rule, f"the string {shown!r}")


def scan_source(file: str, source: bytes) -> list[FlagDoc]:
    """The flags of one file's source, in line order; a file that does not parse is one
    flag itself."""
    try:
        with warnings.catch_warnings():  # an invalid escape in their strings is not our news
            warnings.simplefilter("ignore")
            tree = ast.parse(source, filename=file)
    except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:
        what = getattr(exc, "msg", None) or str(exc)
        rule = _rule(NOT_PARSED)
        return [{"file": file, "line": getattr(exc, "lineno", None) or 0, "rule": rule.id,
                 "construct": f"{type(exc).__name__}: {what}" if what else type(exc).__name__,
                 "reason": rule.reason}]
    found = _Scan(file, tree).found
    return [found[key] for key in sorted(found)]


def scan_folder(folder: Path) -> list[FlagDoc]:
    """The flags of every Python file below `folder` (a staged exercises/ folder), by file
    name, then line."""
    flags: list[FlagDoc] = []
    for path in sorted(folder.rglob("*.py")):
        if path.is_file() and not path.is_symlink():
            flags += scan_source(path.relative_to(folder).as_posix(), path.read_bytes())
    return flags


def flag_text(flag: FlagDoc) -> str:
    """One flag in a line, as every renderer shows it."""
    return f"{flag['file']}:{flag['line']} {flag['construct']}: {flag['reason']}"


def flags_line(flags: Iterable[FlagDoc], shown: int | None = SHOWN_FLAGS) -> str:
    """The flags of one submission in a line, the first `shown` of them (None: all)."""
    flags = list(flags)
    listed = flags if shown is None else flags[:shown]
    more = f" (+{len(flags) - len(listed)} more)" if len(flags) > len(listed) else ""
    return "flagged for review: " + "; ".join(map(flag_text, listed)) + more
