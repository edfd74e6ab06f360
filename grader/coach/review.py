"""The review scan: constructs no solution needs, flagged for a coach to read.

A grader facing submissions written to cheat can hide its judge from the code under test, but
a person reading the code sees what it tried. This scan points that person at the lines worth
reading: each Python file of a submission is parsed with `ast` (never imported, never run) and
every use of a construct that grader/coach/review_rules.toml lists is flagged with its file, line,
what was used and the rule's reason. Flags change no score: they are evidence for a person, and
a false alarm costs a reading.

The scan flags what a name resolves to, not how it is spelt. It evaluates each expression of
the file to what it can know without running it: an object reached from an import or a builtin
(a dotted name such as "os.fork"), a namespace (`vars(m)`, `m.__dict__`, `sys.modules`,
`globals()`, `locals()`, `__builtins__`), a function that looks names up, a constant, or one of a
few constants. What is followed:

- imports and aliases: `import os as o`, `from os import fork`, `f = os`, `g = getattr`,
  `getattr = getattr`, `m = x or os`, `(m := os)`, chains of them in any order, however long;
- a standard-library module reached through another module that imported it (`torch.sys`,
  `torch.builtins`, `tempfile._os`: an attribute that module's source binds with `import`,
  read from its file, never imported; see `canonical`);
- lookups by a string: getattr, setattr, delattr, hasattr, `inspect.getattr_static`,
  `x.__getattribute__(name)`, `type(x).__getattribute__(x, name)`, `object.__getattribute__`,
  `operator.attrgetter` and `methodcaller`, `functools.partial` and `functools.reduce` over them,
  `f.__call__`, items of a namespace (`vars(m)[name]`, `.get(name)`, `.pop(name)`),
  `__import__(name)`, `importlib.import_module(name)`, and these functions reached under any of
  the names above (`builtins.getattr`, `__builtins__["__import__"]`, `print.__self__`);
- what a `case` pattern reads, written out as the statements that read it before the scan
  (`case object(system=run)` on os is `run = os.system`, `case {"fork": f}` an item, a
  positional class pattern a lookup by a name from `__match_args__`; see _spell_out_patterns);
- constant names, folded wherever a name is read from a string: concatenation, `*`, `%`,
  `.format`, f-strings, `"".join(...)`, indexing, slicing and reversal, the pure methods of str
  and bytes (`.lower()`, `.replace()`, `.decode()`, ...), `chr`, `ord`, `bytes`, `map`,
  `reversed`, `range`, `operator.add`, comprehensions over constants, `codecs.decode(...,
  "rot13")`, `base64`/`binascii` decoding, `a if test else b`; a name every binding of which
  gives a constant (`N = "fork"`); and a loop variable over constants, which may be each of
  them (`for name in ("fork", "kill")`, comprehensions too, scoped to the comprehension). The
  folded text is read for the rules' `strings` as well (`"/pr" + "oc"`).

What cannot be known is flagged as itself, under the rule "dynamic-lookup": a lookup whose name
does not fold to constants, on a module or namespace (anything traced to an import, `builtins`,
`sys.modules`, `globals()`); a namespace of one used whole (iterated, copied, passed to a call);
and a lookup function passed on where the scan cannot follow it (`map(getattr, ...)`,
`getattr(*args)`, `partial(getattr, os)` passed to a call).

What is not followed: objects through containers (`[os][0]`), function parameters and returns,
attributes of objects the file makes (`self.m = os`), or scopes (a name bound anywhere in the
file is one name; where its bindings give different objects, the last is taken; a string it is
bound to counts only if every binding of the name gives a constant, so one built up with `+=`
is not). A lookup with a constant name on an object the scan cannot trace (a parameter, a loop
variable over modules) is still matched against the rules' `attributes` (`getattr(m, "fork")`),
not against their dotted `names`, so `getattr(m, "system")` on an untraced `m` is not a flag.
Writes are flagged for the modules the rules' `writes` list (builtins), not for others. A file's
own bindings shadow builtins (a parameter called `compile` is not the builtin). Only string
literals, and strings folded from them, are read as text, and only for the rules' `strings`,
so prose that mentions "subprocess" is not a flag. Folding is bounded (strings of 10,000
characters, a budget of work per file), so a hostile file cannot make the scan slow; a name that
would fold past the bounds is not a constant, and a lookup with it is a flag.
"""

from __future__ import annotations

import ast
import base64
import binascii
import builtins
import codecs
import copy
import fnmatch
import importlib.machinery
import math
import operator
import re
import sys
import time
import tomllib
import warnings
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from functools import cache, cached_property, lru_cache
from pathlib import Path
from typing import Any, TypedDict

from grader.engine.python_source import NotText, misleading, source_text

RULES_FILE = Path(__file__).resolve().parent / "review_rules.toml"
NOT_PARSED = "does-not-parse"
NOT_REVIEWED = "not-reviewed"
COMPILED = "compiled-code"
MISLEADING = "misleading-text"
COMPILED_SUFFIXES = tuple(importlib.machinery.BYTECODE_SUFFIXES
                          + importlib.machinery.EXTENSION_SUFFIXES)
"""The endings of the files Python's own finders import as modules that are not source."""
DYNAMIC = "dynamic-lookup"
ANY_LIBRARY = "*"
"""In a rule's `writes`: any library module that no rule names itself."""
SHOWN_FLAGS = 5
STRING_SHOWN = 40
BUILTIN_NAMES = frozenset(dir(builtins))

# Bounds on what the scan computes for a hostile file: the longest string or sequence folded,
# the work of folding a file in all (one unit a step, one more per 100 characters made), how
# many times over its assignments may be evaluated to settle aliases, and the nesting evaluated
# through a comprehension.
LONGEST = 10_000
CHOICES = 64
WORK = 200_000
ROUNDS = 20
DEEPEST = 100
NESTED = 8
FILE = "<file>"


class FlagDoc(TypedDict):
    """One flag, as `grade --json` carries it in a submission's `flags`."""

    file: str
    line: int
    rule: str
    construct: str
    reason: str


DOTTED_PARTS = 16
"""The parts of a dotted name a rule looks at."""


@dataclass(frozen=True)
class Rule:
    """One entry of review_rules.toml (its header says what each list matches)."""

    id: str
    reason: str
    names: tuple[str, ...] = ()
    attributes: tuple[str, ...] = ()
    builtins: tuple[str, ...] = ()
    writes: tuple[str, ...] = ()
    settings: tuple[str, ...] = ()
    strings: tuple[str, ...] = ()
    read_attributes: tuple[str, ...] = ()
    keywords: tuple[str, ...] = ()

    @cached_property
    def patterns(self) -> tuple[str, ...]:
        return self.names + tuple(f"builtins.{name}" for name in self.builtins)

    @cached_property
    def _pattern(self) -> re.Pattern[str]:
        return re.compile("|".join(f"(?:{fnmatch.translate(p)})" for p in self.patterns)
                          or r"(?!)")

    def reaches(self, dotted: str) -> bool:
        """Whether a dotted name, or a module or object above it, is one of the rule's."""
        return any(self._pattern.match(prefix) for prefix in _prefixes(dotted))

    def sets(self, module: str) -> bool:
        """Whether a module is one of the rule's `settings`, or lies below one: a library's
        namespace of switches meant to be set (`torch.backends.cudnn.deterministic = True`)."""
        return any(prefix in self.settings for prefix in _prefixes(module))

    def names_attribute(self, name: str) -> bool:
        return any(fnmatch.fnmatchcase(name, pattern) for pattern in self.attributes)


def _prefixes(dotted: str) -> tuple[str, ...]:
    """A dotted name and every module or object above it, from its first DOTTED_PARTS parts
    (no module path is deeper): a chain of attributes hundreds long costs what a short one
    does, not its length cubed."""
    return _prefixes_of(".".join(dotted.split(".", DOTTED_PARTS)[:DOTTED_PARTS]))


@lru_cache(maxsize=4096)
def _prefixes_of(dotted: str) -> tuple[str, ...]:
    parts = dotted.split(".")
    return tuple(".".join(parts[:n]) for n in range(1, len(parts) + 1))


def _fields(entry: dict[str, Any]) -> dict[str, Any]:
    """A rule's entry with its lists as tuples."""
    return {key: tuple(value) if isinstance(value, list) else value
            for key, value in entry.items()}


@cache
def rules() -> tuple[Rule, ...]:
    """The rules, read once; the file ships inside the package."""
    data = tomllib.loads(RULES_FILE.read_text(encoding="utf-8"))
    loaded = tuple(Rule(**_fields(entry)) for entry in data["rule"])
    for needed in (NOT_PARSED, NOT_REVIEWED, DYNAMIC, COMPILED, MISLEADING):
        if needed not in {rule.id for rule in loaded}:
            raise RuntimeError(f"{RULES_FILE} has no rule {needed!r}")
    return loaded


def _rule(rule_id: str) -> Rule:
    return next(rule for rule in rules() if rule.id == rule_id)


# --- what an expression is known to be -------------------------------------------------------

@dataclass(frozen=True)
class _Const:
    """A constant: str, bytes, int, float, bool, None, or a tuple of them."""

    value: Any


@dataclass(frozen=True)
class _Choices:
    """One of a few constants: a name bound more than once, each time to a constant, or a loop
    variable over constants (`for name in ("asarray", "array")`)."""

    values: tuple[Any, ...]


@dataclass(frozen=True)
class _Ref:
    """An object reached from an import or a builtin, by its dotted name. `module`: traced to a
    module (an import, `builtins`), not a bare builtin such as `str` or `getattr`."""

    path: str
    module: bool = True


@dataclass(frozen=True)
class _Namespace:
    """A table of names: `vars(m)` and `m.__dict__` (prefix "m"), `sys.modules` (prefix ""),
    `globals()` (FILE), `__builtins__` (attributes too), or the namespace of an object the scan
    cannot trace (prefix None)."""

    prefix: str | None
    path: str | None
    shown: str
    attributes: bool = False


@dataclass(frozen=True)
class _Method:
    """`x.__getattribute__` (or `__getattr__`): one name on x, or two arguments (obj, name)."""

    owner: Value
    shown: str


@dataclass(frozen=True)
class _NsMethod:
    """`namespace.get` and its kin: an item by its name."""

    namespace: _Namespace
    name: str


@dataclass(frozen=True)
class _Getter:
    """`operator.attrgetter(names)` or `methodcaller(name)`; names None: not constants."""

    names: tuple[str, ...] | None


@dataclass(frozen=True)
class _Partial:
    """`functools.partial(func, *args)`."""

    func: Value
    args: tuple[Value, ...]


Value = _Const | _Choices | _Ref | _Namespace | _Method | _NsMethod | _Getter | _Partial | None

BUILTINS_NS = _Namespace("builtins", "builtins.__dict__", "__builtins__", attributes=True)
LOOKS_UP = {"builtins.getattr": "getattr", "inspect.getattr_static": "getattr_static",
            "builtins.hasattr": "hasattr"}
SETS = {"builtins.setattr": "setattr", "builtins.delattr": "delattr"}
IMPORTERS = frozenset({"builtins.__import__", "importlib.__import__"})
# Lookup functions that are followed where they are called, and flagged where passed on.
GETTERS = frozenset({*LOOKS_UP, *SETS, "builtins.vars", "builtins.globals", "builtins.locals",
                     "operator.attrgetter", "operator.methodcaller", "_operator.attrgetter",
                     "_operator.methodcaller"}) - {"builtins.hasattr"}
PARTIAL = frozenset({"functools.partial", "_functools.partial"})
REDUCE = frozenset({"functools.reduce", "_functools.reduce"})
# Calls that follow what their first argument is (a lookup function, or a namespace).
TAKES_FIRST = PARTIAL | REDUCE | frozenset(LOOKS_UP)
MEMBERS = frozenset({"inspect.getmembers", "inspect.getmembers_static"})
GETATTRIBUTE = frozenset({"__getattribute__", "__getattr__"})
ITEM_METHODS = frozenset({"get", "pop", "setdefault", "__getitem__", "__setitem__",
                          "__delitem__"})
NS_HARMLESS = frozenset({"keys", "__contains__", "__len__"})
STR_METHODS = frozenset({"join", "format", "decode", "encode", "lower", "upper", "strip",
                         "lstrip", "rstrip", "replace", "swapcase", "title", "capitalize",
                         "casefold", "split", "rsplit", "removeprefix", "removesuffix",
                         "partition", "rpartition"})
CODECS = frozenset({"utf_8", "utf8", "ascii", "latin_1", "latin1", "iso_8859_1", "utf_16",
                    "utf_16_le", "utf_16_be", "utf_32", "rot13", "rot_13", "hex", "hex_codec",
                    "base64", "base64_codec", "unicode_escape", "raw_unicode_escape"})


def _seq(value: Any) -> bool:
    return isinstance(value, str | bytes | tuple)


def _small(value: Any) -> bool:
    if isinstance(value, str | bytes | tuple):
        return len(value) <= LONGEST and (not isinstance(value, tuple) or all(map(_small, value)))
    if isinstance(value, bool | float | slice) or value is None:
        return True
    return isinstance(value, int) and abs(value) <= 2 ** 64


def _codec(name: Any) -> str:
    if not isinstance(name, str) or name.lower().replace("-", "_") not in CODECS:
        raise ValueError(name)
    return name


def _template(text: Any, percent: bool = False) -> Any:
    """A format string the scan will fill in: none asks for a width of 10,000 or more (nor, for
    `%`, for a width given by an argument)."""
    if isinstance(text, bytes):
        text = text.decode("latin-1")
    if not isinstance(text, str) or re.search(r"\d{5,}", text) or percent and "*" in text:
        raise ValueError("too wide")
    return text


def _fill(template: Any, args: Any) -> Any:
    _template(template, percent=True)
    if any(isinstance(a, int) and abs(a) > 10 ** 5 for a in (args if isinstance(args, tuple)
                                                             else (args,))):
        raise ValueError("too wide")
    return template % args


def _str_method(receiver: Any, name: str, args: list[Any], kwargs: dict[str, Any]) -> Any:
    """A pure method of a str or bytes constant, refused where it would be large."""
    if not isinstance(receiver, str | bytes) or name not in STR_METHODS:
        raise ValueError(name)
    if name == "join":
        parts = args[0] if args else ()
        if not _seq(parts) or sum(len(p) if isinstance(p, str | bytes) else LONGEST
                                  for p in parts) + len(receiver) * len(parts) > LONGEST:
            raise ValueError("too long")
    elif name == "format":
        _template(receiver)
        if any(isinstance(a, int) and abs(a) > 10 ** 5 for a in [*args, *kwargs.values()]):
            raise ValueError("too wide")
    elif name == "replace":
        new = args[1] if len(args) > 1 else ""
        if (len(receiver) + 1) * (len(new) + 1) > LONGEST:
            raise ValueError("too long")
    elif name in ("decode", "encode"):
        _codec(args[0] if args else kwargs.get("encoding", "utf-8"))
    return getattr(receiver, name)(*args, **kwargs)


def _from_hex(text: Any) -> bytes:
    return bytes.fromhex(text)


def _decoder(decode: Callable[..., bytes]) -> Callable[..., bytes]:
    def run(data: Any, *rest: Any) -> bytes:
        if not isinstance(data, str | bytes) or rest:
            raise ValueError("not folded")
        return decode(data)
    return run


def _codecs(convert: Callable[..., Any]) -> Callable[..., Any]:
    def run(data: Any, encoding: Any = "utf-8", errors: Any = "strict") -> Any:
        return convert(data, _codec(encoding), errors)
    return run


def _bytes(source: Any = b"", encoding: Any = None, errors: Any = "strict") -> bytes:
    if isinstance(source, str):
        return source.encode(_codec(encoding), errors)
    if isinstance(source, int):
        raise ValueError("not folded")
    return bytes(source)


def _str(value: Any = "", encoding: Any = None, errors: Any = "strict") -> str:
    if encoding is not None:
        return str(value, _codec(encoding), errors)
    if not isinstance(value, str | int | float | bool | None):
        raise ValueError("not folded")
    return str(value)


def _range(*args: Any) -> tuple[int, ...]:
    span = range(*args)
    if len(span) > LONGEST:
        raise ValueError("too long")
    return tuple(span)


def _int(value: Any, base: Any = 10) -> int:
    if not isinstance(value, str | int) or isinstance(value, str) and len(value) > 40:
        raise ValueError("not folded")
    return int(value, base) if isinstance(value, str) else int(value)


# Functions of constants the scan computes, by the dotted name they are reached under.
PURE: dict[str, Callable[..., Any]] = {
    "builtins.chr": chr, "builtins.ord": ord, "builtins.str": _str, "builtins.len": len,
    "builtins.int": _int, "builtins.bytes": _bytes, "builtins.bytearray": _bytes,
    "builtins.reversed": lambda seq: tuple(reversed(seq)),
    "builtins.sorted": lambda seq: tuple(sorted(seq)),
    "builtins.list": tuple, "builtins.tuple": tuple, "builtins.range": _range,
    "builtins.bytes.fromhex": _from_hex, "builtins.bytearray.fromhex": _from_hex,
    "codecs.decode": _codecs(codecs.decode), "codecs.encode": _codecs(codecs.encode),
    **{f"base64.{name}": _decoder(getattr(base64, name))
       for name in ("b64decode", "b32decode", "b16decode", "b85decode", "a85decode",
                    "urlsafe_b64decode", "standard_b64decode")},
    **{f"binascii.{name}": _decoder(getattr(binascii, name))
       for name in ("unhexlify", "a2b_hex", "a2b_base64")},
    **{f"{module}.{name}": operator.add for module in ("operator", "_operator")
       for name in ("add", "concat", "__add__", "__concat__")},
}
BINARY: dict[type[ast.operator], Callable[[Any, Any], Any]] = {
    ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
    ast.Mod: operator.mod, ast.FloorDiv: operator.floordiv}
COMPARE: dict[type[ast.cmpop], Callable[[Any, Any], Any]] = {
    ast.Eq: operator.eq, ast.NotEq: operator.ne, ast.Lt: operator.lt, ast.LtE: operator.le,
    ast.Gt: operator.gt, ast.GtE: operator.ge, ast.In: lambda a, b: a in b,
    ast.NotIn: lambda a, b: a not in b}
FOLDED = (ast.BinOp, ast.UnaryOp, ast.JoinedStr, ast.FormattedValue, ast.Slice, ast.Compare,
          ast.IfExp, ast.BoolOp)
FOLD_ERRORS = (ArithmeticError, LookupError, TypeError, ValueError, UnicodeError,
               binascii.Error, RecursionError, MemoryError)


def _binary(op: ast.operator, left: Any, right: Any) -> Any:
    """A binary operation on constants, refused where its result would be large."""
    if isinstance(op, ast.Mult):
        count, seq = (right, left) if _seq(left) else (left, right)
        if _seq(seq) and (not isinstance(count, int) or len(seq) * count > LONGEST):
            raise ValueError("too long")
    if isinstance(op, ast.Mod) and isinstance(left, str | bytes):
        return _fill(left, right)
    if isinstance(op, ast.Sub | ast.FloorDiv | ast.Mod) and not (
            isinstance(left, int) and isinstance(right, int)):
        raise TypeError("not folded")
    return BINARY[type(op)](left, right)


@dataclass
class _Budget:
    left: int = WORK


# --- the names of one file -------------------------------------------------------------------

class _Names:
    """What the names of one file are bound to: imports, the assignments that may make an
    alias or a constant, and how often each name is bound (any binding shadows a builtin)."""

    def __init__(self, tree: ast.Module) -> None:
        self.imported: dict[str, str] = {}
        self.star: list[str] = []
        self.bound: set[str] = set()
        self.count: dict[str, int] = {}
        # A comprehension's variables are its own: each use inside it, and the items it takes.
        self.scoped: dict[ast.AST, ast.expr] = {}
        in_comprehension: set[ast.AST] = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.ListComp | ast.SetComp | ast.GeneratorExp | ast.DictComp):
                inside = [node.key, node.value] if isinstance(node, ast.DictComp) else [node.elt]
                for n, loop in enumerate(node.generators):
                    in_comprehension.update(ast.walk(loop.target))
                    if isinstance(loop.target, ast.Name):
                        for part in [*loop.ifs, *node.generators[n + 1:], *inside]:
                            self.scoped.update((use, loop.iter) for use in ast.walk(part)
                                               if isinstance(use, ast.Name)
                                               and use.id == loop.target.id)
        assignments: list[tuple[tuple[int, int], str, ast.expr, bool]] = []
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    local = alias.asname or alias.name.split(".")[0]
                    self.imported[local] = alias.name if alias.asname else local
                    self.count[local] = self.count.get(local, 0) + 1
            elif isinstance(node, ast.ImportFrom):
                for alias in node.names:
                    if alias.name == "*":
                        self.star.append(node.module or "")
                    else:
                        local = alias.asname or alias.name
                        self.imported[local] = _joined(node.module, alias.name)
                        self.count[local] = self.count.get(local, 0) + 1
            for name, value, each in _assigns(node):
                at = getattr(node, "lineno", 0), getattr(node, "col_offset", 0)
                assignments.append((at, name, value, each))
            for name in _binds(node):
                self.bound.add(name)
                if node not in in_comprehension:
                    self.count[name] = self.count.get(name, 0) + 1
        # (name, value, each): each, where the name takes each item of the value in turn
        self.assignments = [entry[1:] for entry in sorted(assignments, key=lambda e: e[0])]

    def builtin(self, name: str) -> bool:
        """Whether a bare name can only be the builtin of that name."""
        return name not in self.bound and name not in self.imported


def _assigns(node: ast.AST) -> Iterator[tuple[str, ast.expr, bool]]:
    """The bindings of a name to a value the scan can follow: `x = ...`, `x: T = ...`,
    `(x := ...)`, names unpacked from a tuple (`_, x = 0, os`: x is os; `a, b = v`: b is
    `v[1]`), a parameter's default (`def f(m=os)`, lambdas too), `with ... as x`, and (each
    True) `for x in ...`."""
    if isinstance(node, ast.Assign):
        for target in node.targets:
            yield from _unpacked(target, node.value)
    elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
        positional = [*node.args.posonlyargs, *node.args.args]
        defaults = zip(positional[len(positional) - len(node.args.defaults):],
                       node.args.defaults, strict=True)
        for arg, default in [*defaults, *zip(node.args.kwonlyargs, node.args.kw_defaults,
                                               strict=True)]:
            if default is not None:
                yield arg.arg, default, False
    elif isinstance(node, ast.With | ast.AsyncWith):
        for item in node.items:
            if item.optional_vars is not None:
                yield from _unpacked(item.optional_vars, item.context_expr)
    elif isinstance(node, ast.AnnAssign) and node.value is not None \
            and isinstance(node.target, ast.Name):
        yield node.target.id, node.value, False
    elif isinstance(node, ast.NamedExpr):
        yield node.target.id, node.value, False
    elif isinstance(node, ast.For | ast.AsyncFor) and isinstance(node.target, ast.Name):
        yield node.target.id, node.iter, True


def _unpacked(target: ast.expr, value: ast.expr) -> Iterator[tuple[str, ast.expr, bool]]:
    """What each name of an assignment's target is bound to: a tuple or list of names against
    a tuple or list as long, name by name; against anything else, its items."""
    if isinstance(target, ast.Name):
        yield target.id, value, False
    elif isinstance(target, ast.Tuple | ast.List) \
            and not any(isinstance(e, ast.Starred) for e in target.elts):
        if isinstance(value, ast.Tuple | ast.List) and len(value.elts) == len(target.elts) \
                and not any(isinstance(e, ast.Starred) for e in value.elts):
            for inner, item in zip(target.elts, value.elts, strict=True):
                yield from _unpacked(inner, item)
        else:
            for index, inner in enumerate(target.elts):
                yield from _unpacked(inner, ast.copy_location(
                    ast.Subscript(value, ast.Constant(index), ast.Load()), value))


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


def _object(path: str, module: bool = True) -> Value:
    """What a dotted name reaches: a namespace for `sys.modules` and `m.__dict__`."""
    path = canonical(path)
    if path == "sys.modules":
        return _Namespace("", path, path)
    if path.endswith(".__dict__"):
        return _Namespace(path.removesuffix(".__dict__"), path, path)
    return _Ref(path, module) if path else None


@lru_cache(maxsize=4096)
def canonical(path: str) -> str:
    """A dotted name as the module it reaches: an attribute of a module that its source binds
    with an `import` statement (read from its file, never imported) is the module imported
    there, so `torch.sys.modules` is `sys.modules`, `torch.builtins.exec` is `exec` and
    `tempfile._os.system` is `os.system` to every rule, while `torch.autograd.profiler.profile`
    (a class) stays what it is. A package's own submodule stays its own (`numpy.random`,
    `torch.signal`). Only names like a standard-library module's (behind underscores too) are
    looked up; where a module has no source to read (a builtin or compiled one), an attribute
    named exactly like a standard-library module is taken for it."""
    parts = path.split(".")
    for index in range(1, len(parts)):
        module, name = tuple(parts[:index]), parts[index]
        # Only a name like a standard-library module's is looked for (files are read for it).
        if name.lstrip("_") not in sys.stdlib_module_names or _own_submodule(module, name):
            continue
        imports = _imports(module)
        target = imports.get(name) if imports is not None else (
            name if name in sys.stdlib_module_names else None)
        if target is not None:
            return canonical(".".join([target, *parts[index + 1:]]))
    return path


@lru_cache(maxsize=512)
def _imports(module: tuple[str, ...]) -> dict[str, str] | None:
    """The names a module's source binds to modules with `import` outside its functions and
    classes (`import os as _os`: `_os` is os); None where no source of it is found."""
    folders = _package_folders(module)
    if folders:
        files = [folder / "__init__.py" for folder in folders]
    elif len(module) > 1:
        files = [folder / f"{module[-1]}.py" for folder in _package_folders(module[:-1])]
    else:
        spec = _top_level(module[0])
        files = [Path(spec.origin)] if spec is not None and spec.origin else []
    source = next((f for f in files if f.suffix == ".py" and f.is_file()), None)
    if source is None:
        return None
    try:
        tree = ast.parse(source_text(source.read_bytes()))
    except (OSError, SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    bound: dict[str, str] = {}
    pending: list[ast.AST] = list(tree.body)
    while pending:
        node = pending.pop()
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname:
                    bound[alias.asname] = alias.name
                else:
                    top = alias.name.partition(".")[0]
                    bound[top] = top
        elif not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            pending.extend(child for child in ast.iter_child_nodes(node)
                           if isinstance(child, ast.stmt))
    return bound


@lru_cache(maxsize=1024)
def _package_folders(package: tuple[str, ...]) -> tuple[Path, ...]:
    """The folders a package's submodules lie in, found as the import system would find them
    but without importing anything; none for a module that is not a package (or not here)."""
    if len(package) == 1:
        spec = _top_level(package[0])
        return tuple(Path(p) for p in (spec.submodule_search_locations or ())) if spec else ()
    return tuple(folder / package[-1] for folder in _package_folders(package[:-1])
                 if (folder / package[-1]).is_dir())


@lru_cache(maxsize=256)
def _top_level(name: str) -> importlib.machinery.ModuleSpec | None:
    """Where a top-level module lies, as the import system would find it, importing nothing."""
    try:
        return importlib.machinery.PathFinder.find_spec(name)
    except (ImportError, ValueError):
        return None


def _library(path: str) -> bool:
    """Whether a dotted path lies in a library: the standard library, or a module installed
    where the grader runs (the submission's own files are not on its path)."""
    top = path.partition(".")[0]
    return top in sys.stdlib_module_names or top in sys.builtin_module_names \
        or _top_level(top) is not None


def _own_submodule(package: tuple[str, ...], name: str) -> bool:
    suffixes = importlib.machinery.all_suffixes()
    return any((folder / name).is_dir() or any((folder / f"{name}{suffix}").is_file()
                                               for suffix in suffixes)
               for folder in _package_folders(package))


def _path(value: Value) -> str | None:
    if isinstance(value, _Ref):
        return value.path
    return value.path if isinstance(value, _Namespace) else None


def _shown(value: Value) -> str:
    if isinstance(value, _Ref):
        return value.path
    return value.shown if isinstance(value, _Namespace) else "..."


def _traced(value: Value) -> bool:
    """Whether a lookup on this object could reach what the rules name: a module, or a
    namespace of one."""
    if isinstance(value, _Ref):
        return value.module
    return isinstance(value, _Namespace) and value.prefix is not None


def _text(value: Value) -> str | None:
    return value.value if isinstance(value, _Const) and isinstance(value.value, str) else None


def _texts(value: Value) -> tuple[str, ...] | None:
    """The names a key may be: one constant, or each of a few."""
    if isinstance(value, _Const):
        return (value.value,) if isinstance(value.value, str) else None
    if isinstance(value, _Choices) and all(isinstance(v, str) for v in value.values):
        return value.values
    return None


# --- evaluation ------------------------------------------------------------------------------

Event = tuple[str, str, str]  # ("reach", dotted, construct), ("dynamic", construct, ""),
# ("write", module, name), ("attr", name, "")
ORDER = ("reach", "dynamic", "write", "attr")  # which construct names a flag on its line


@dataclass
class _Eval:
    """Evaluates the expressions of one file to what the scan can know of them, bottom up, once
    each; what a node does along the way (a dynamic lookup, a write, an attribute named) is kept
    as its events."""

    names: _Names
    resolved: dict[str, Value]
    budget: _Budget
    memo: dict[ast.AST, Value] = field(default_factory=dict)
    events: dict[ast.AST, list[Event]] = field(default_factory=dict)
    assigning: str | None = None
    depth: int = 0
    truncated: int = 0
    sink: list[list[Event]] = field(default_factory=list)

    def settle(self, root: ast.AST, deadline: float = math.inf) -> None:
        """Evaluate every node under root, children first, so that no evaluation recurses
        deeply however deep the file nests; _OutOfTime past the deadline (CPU seconds)."""
        for count, node in enumerate(reversed(list(ast.walk(root)))):
            if count % DEADLINE_EVERY == 0 and time.process_time() > deadline:
                raise _OutOfTime
            self.value(node)

    def value(self, node: ast.AST, env: dict[str, Value] | None = None) -> Value:
        if env is None and node in self.memo:
            return self.memo[node]
        if self.depth > DEEPEST:
            self.truncated += 1
            return None
        truncated = self.truncated
        events: list[Event] = []
        self.sink.append(events)
        self.depth += 1
        try:
            found = self._compute(node, env)
        finally:
            self.depth -= 1
            self.sink.pop()
        if _nested(found) > NESTED:
            found = None
        if env is None and truncated == self.truncated:  # else: its turn comes, bottom up
            self.memo[node] = found
            if events:
                self.events[node] = events
        return found

    def event(self, kind: str, what: str, extra: str = "") -> None:
        if self.sink:
            self.sink[-1].append((kind, what, extra))

    def const(self, compute: Callable[[], Any]) -> Value:
        """A constant folded, or None where it cannot be or the file's budget is spent."""
        if self.budget.left <= 0:
            return None
        try:
            result = compute()
        except FOLD_ERRORS:
            return None
        if isinstance(result, list | bytearray):
            result = bytes(result) if isinstance(result, bytearray) else tuple(result)
        if not _small(result):
            return None
        self.budget.left -= 1 + (len(result) // 100 if isinstance(result, str | bytes | tuple)
                                 else 0)
        return _Const(result)

    # names

    def name(self, name: str) -> Value:
        if name == self.assigning:  # `getattr = getattr`: the right side is the one before
            return self.outer(name, strict=False)
        found = self.resolved.get(name)
        return found if found is not None else self.outer(name, strict=True)

    def outer(self, name: str, strict: bool) -> Value:
        """A name as imports and builtins have it; `strict`: only where the file does not bind
        it itself."""
        if name in self.names.imported:
            return _object(self.names.imported[name])
        if strict and not self.names.builtin(name):
            return None
        if name == "__builtins__":
            return BUILTINS_NS
        if name in BUILTIN_NAMES:
            return _Ref(f"builtins.{name}", module=False)
        if strict and len(self.names.star) == 1:
            return _object(_joined(self.names.star[0], name))
        return None

    # lookups

    def attribute(self, owner: Value, name: str) -> Value:
        """`owner.name`."""
        if name == "__call__":  # `getattr.__call__(os, "fork")` is getattr's call
            return owner
        if name == "__self__" and isinstance(owner, _Ref) and owner.path.startswith("builtins."):
            return _Ref("builtins")  # a builtin function's __self__ is the builtins module
        if isinstance(owner, _Namespace):
            if name in ITEM_METHODS:
                return _NsMethod(owner, name)
            if owner.attributes and owner.prefix is not None:
                return _object(f"{owner.prefix}.{name}")
            if name not in NS_HARMLESS and owner.prefix is not None:
                self.event("dynamic", f"{owner.shown}.{name}")
            return None
        if name in GETATTRIBUTE:
            return _Method(owner, _shown(owner))
        if isinstance(owner, _Ref):
            if name == "__globals__":
                return _Namespace(None, None, f"{owner.path}.__globals__")
            return _object(f"{owner.path}.{name}", owner.module)
        if name in ("__dict__", "__globals__") and not isinstance(owner, _Const):
            return _Namespace(None, None, f"....{name}")
        return None

    def lookup(self, owner: Value, key: Value, how: str) -> Value:
        """A lookup of the name `key` on `owner`, as getattr does it."""
        names = _texts(key)
        if names is None:
            if _traced(owner):
                self.event("dynamic", f"{how}({_shown(owner)}, ...)")
            return None
        return self.each(names, lambda name: self.attribute(owner, name))

    def each(self, names: tuple[str, ...], find: Callable[[str], Value]) -> Value:
        """What one name finds; of several, each is reached and none is the value."""
        found = []
        for name in names:
            self.event("attr", name)
            found.append(find(name))
        if len(found) == 1:
            return found[0]
        for one in found:
            if (path := _path(one)) is not None:
                self.event("reach", path)
        return None

    def item(self, namespace: _Namespace, key: Value, how: str, store: bool = False) -> Value:
        """`namespace[key]`."""
        names = _texts(key)
        if names is None:
            if namespace.prefix is not None:
                self.event("dynamic", how)
            return None
        return self.each(names, lambda name: self.named_item(namespace, name, store))

    def named_item(self, namespace: _Namespace, name: str, store: bool) -> Value:
        if namespace.prefix is None:
            return None
        if store and namespace.prefix not in ("", FILE):
            self.event("write", namespace.prefix, name)
        if namespace.prefix == "":
            return _object(name)
        if namespace.prefix == FILE:
            return self.name(name)
        return _object(f"{namespace.prefix}.{name}")

    # calls

    def call(self, func: Value, args: list[Value], kwargs: dict[str, Value],
             spread: bool) -> Value:
        if spread:
            if _getter(func) is not None:
                self.event("dynamic", f"{_getter(func)}(*...)")
            return None
        if isinstance(func, _Partial):  # never a partial of a partial: those are flattened
            return self.call(func.func, [*func.args, *args], kwargs, spread)
        if isinstance(func, _Method):
            if len(args) == 1:
                return self.lookup(func.owner, args[0], f"{func.shown}.__getattribute__")
            return self.lookup(args[0], args[1], "__getattribute__") if len(args) == 2 else None
        if isinstance(func, _NsMethod):
            return self.item(func.namespace, args[0], f"{func.namespace.shown}.{func.name}(...)",
                             store=func.name != "get" and func.name != "__getitem__") \
                if args else None
        if isinstance(func, _Getter):
            return self.get_names(func.names, args[0]) if args else None
        if isinstance(func, _Ref):
            return self.call_ref(func.path, args, kwargs)
        return None

    def get_names(self, names: tuple[str, ...] | None, owner: Value) -> Value:
        """`operator.attrgetter(*names)(owner)`."""
        if names is None:
            if _traced(owner):
                self.event("dynamic", f"attrgetter(...)({_shown(owner)})")
            return None
        found: Value = None
        for dotted in names:
            reached = owner
            for part in dotted.split("."):
                reached = self.lookup(reached, _Const(part), "attrgetter")
            found = reached if found is None else found
        return found if len(names) == 1 else None

    def call_ref(self, path: str, args: list[Value], kwargs: dict[str, Value]) -> Value:
        last = path.rsplit(".", 1)[-1]
        if path in LOOKS_UP and len(args) >= 2:
            found = self.lookup(args[0], args[1], last)
            if last == "hasattr":
                if (reached := _path(found)) is not None:
                    self.event("reach", reached)
                return None
            return found
        if path in SETS and len(args) >= 2:
            return self.set_by_name(args[0], args[1], last)
        if path == "builtins.vars":
            return self.namespace_of(args[0]) if args else _Namespace(FILE, None, "vars()")
        if path in ("builtins.globals", "builtins.locals"):
            return _Namespace(FILE, None, f"{last}()")
        if path in IMPORTERS or path == "importlib.import_module":
            return self.import_by_name(path, args, kwargs)
        if last in ("attrgetter", "methodcaller") and path.rsplit(".", 1)[0] in (
                "operator", "_operator"):
            keys = [_text(arg) for arg in (args if last == "attrgetter" else args[:1])]
            if None in keys or not keys:
                return _Getter(None)
            for key in keys:
                for part in (key or "").split("."):
                    self.event("attr", part)
            return _Getter(tuple(key or "" for key in keys))
        if path in PARTIAL and args:
            inner = args[0]
            return _Partial(inner.func, (*inner.args, *args[1:])) \
                if isinstance(inner, _Partial) else _Partial(inner, tuple(args[1:]))
        if path in REDUCE and len(args) >= 2:
            return self.reduce(args[0], args[1], args[2:])
        if path in MEMBERS and args and _traced(args[0]):
            self.event("dynamic", f"{last}({_shown(args[0])})")
            return None
        return self.pure(path, args, kwargs)

    def set_by_name(self, owner: Value, key: Value, how: str) -> Value:
        """setattr/delattr: the attribute reached, and the module written to."""
        module = owner.path if isinstance(owner, _Ref) else \
            owner.prefix if isinstance(owner, _Namespace) and owner.attributes else None
        names = _texts(key)
        if names is None:
            if _traced(owner):
                self.event("dynamic", f"{how}({_shown(owner)}, ...)")
            if module is not None:
                self.event("write", module)
            return None
        for name in names:
            self.event("attr", name)
            if module is not None:
                self.event("reach", f"{module}.{name}")
                self.event("write", module, name)
        return None

    def namespace_of(self, owner: Value) -> Value:
        if isinstance(owner, _Ref):
            return _Namespace(owner.path, f"{owner.path}.__dict__", f"vars({owner.path})")
        if isinstance(owner, _Namespace) and owner.attributes:
            return owner
        return _Namespace(None, None, "vars(...)")

    def import_by_name(self, path: str, args: list[Value], kwargs: dict[str, Value]) -> Value:
        modules = _texts(args[0] if args else kwargs.get("name"))
        if modules is None:
            return None
        for module in modules:
            if module and not module.startswith("."):
                self.event("reach", module, f"import of {module!r} by its name")
        if len(modules) != 1 or not modules[0] or modules[0].startswith("."):
            return None
        module = modules[0]
        if path not in IMPORTERS:
            return _object(module)
        fromlist = args[3] if len(args) > 3 else kwargs.get("fromlist")
        return _object(module if isinstance(fromlist, _Const) and fromlist.value
                       else module.split(".")[0])

    def reduce(self, func: Value, items: Value, start: list[Value]) -> Value:
        """`functools.reduce(func, items[, start])`, run where the items are constants."""
        if isinstance(items, _Const) and _seq(items.value) and len(items.value) <= LONGEST:
            pending = list(items.value)
            if start:
                total = start[0]
            elif pending:
                total = _Const(pending.pop(0))
            else:
                return None
            for item in pending:
                total = self.call(func, [total, _Const(item)], {}, False)
                self.budget.left -= 1
                if self.budget.left <= 0:
                    return None
            return total
        if _getter(func) is not None and start and _traced(start[0]):
            self.event("dynamic", f"reduce({_getter(func)}, ..., {_shown(start[0])})")
        return None

    def pure(self, path: str, args: list[Value], kwargs: dict[str, Value]) -> Value:
        """A function of constants the scan computes itself, or None."""
        if not all(isinstance(a, _Const) for a in [*args, *kwargs.values()]):
            return None
        plain = [a.value for a in args if isinstance(a, _Const)]
        named = {k: v.value for k, v in kwargs.items() if isinstance(v, _Const)}
        if path in PURE:
            return self.const(lambda: PURE[path](*plain, **named))
        if path.startswith(("builtins.str.", "builtins.bytes.")) and plain:
            method = path.rsplit(".", 1)[1]
            return self.const(lambda: _str_method(plain[0], method, plain[1:], named))
        return None

    def mapped(self, func: Value, items: Value) -> Value:
        """`map(f, constants)` where f is a function the scan computes."""
        if isinstance(func, _Ref) and func.path in PURE and isinstance(items, _Const) \
                and _seq(items.value):
            convert = PURE[func.path]
            return self.const(lambda: tuple(convert(item) for item in items.value))
        return None

    # the nodes

    def _compute(self, node: ast.AST, env: dict[str, Value] | None) -> Value:
        if isinstance(node, ast.Constant):
            return _Const(node.value) if _small(node.value) else None
        if isinstance(node, ast.Name):
            if env is not None and node.id in env:
                return env[node.id]
            if node in self.names.scoped:
                return _each(self.value(self.names.scoped[node]))
            return self.name(node.id) if isinstance(node.ctx, ast.Load) else None
        if isinstance(node, ast.Attribute):
            owner = self.value(node.value, env)
            self.event("attr", node.attr)
            if isinstance(node.ctx, ast.Store | ast.Del):
                module = owner.path if isinstance(owner, _Ref) else owner.prefix \
                    if isinstance(owner, _Namespace) and owner.attributes else None
                if module is not None:
                    self.event("write", module, node.attr)
            return self.attribute(owner, node.attr)
        if isinstance(node, ast.Subscript):
            return self._subscript(node, env)
        if isinstance(node, ast.Call):
            return self._call(node, env)
        if isinstance(node, ast.NamedExpr):
            return self.value(node.value, env)
        return self._fold(node, env)

    def _subscript(self, node: ast.Subscript, env: dict[str, Value] | None) -> Value:
        owner = self.value(node.value, env)
        key = self.value(node.slice, env)
        if isinstance(owner, _Namespace):
            return self.item(owner, key, f"{owner.shown}[...]",
                             store=isinstance(node.ctx, ast.Store | ast.Del))
        if isinstance(owner, _Const) and isinstance(key, _Const):
            return self.const(lambda: owner.value[key.value])
        return None

    def _call(self, node: ast.Call, env: dict[str, Value] | None) -> Value:
        spread = any(isinstance(a, ast.Starred) for a in node.args) \
            or any(kw.arg is None for kw in node.keywords)
        args = [self.value(a, env) for a in node.args]
        kwargs = {kw.arg: self.value(kw.value, env) for kw in node.keywords if kw.arg}
        if isinstance(node.func, ast.Attribute):
            receiver = self.value(node.func.value, env)
            if isinstance(receiver, _Const) and node.func.attr in STR_METHODS and not spread \
                    and all(isinstance(a, _Const) for a in [*args, *kwargs.values()]):
                method = node.func.attr
                return self.const(lambda: _str_method(
                    receiver.value, method, [a.value for a in args if isinstance(a, _Const)],
                    {k: v.value for k, v in kwargs.items() if isinstance(v, _Const)}))
        func = self.value(node.func, env)
        if isinstance(func, _Ref) and func.path == "builtins.map" and len(args) == 2:
            return self.mapped(args[0], args[1])
        return self.call(func, args, kwargs, spread)

    def _fold(self, node: ast.AST, env: dict[str, Value] | None) -> Value:
        """The constant an expression of constants folds to, or None."""
        if isinstance(node, ast.Tuple | ast.List) and isinstance(node.ctx, ast.Load):
            items = [self.value(item, env) for item in node.elts]
            if all(isinstance(item, _Const) for item in items):
                return self.const(lambda: tuple(i.value for i in items if isinstance(i, _Const)))
            return None
        if isinstance(node, ast.ListComp | ast.GeneratorExp):
            return self._comprehension(node, env)
        if not isinstance(node, FOLDED):
            return None
        parts = [self.value(child, env) for child in ast.iter_child_nodes(node)
                 if isinstance(child, ast.expr)]
        if isinstance(node, ast.IfExp) and not isinstance(parts[0], _Const):
            return _either(parts[1:])
        if isinstance(node, ast.BoolOp) and not all(isinstance(p, _Const) for p in parts):
            return _either(parts)
        if not all(isinstance(part, _Const) for part in parts):
            return None
        values = [part.value for part in parts if isinstance(part, _Const)]
        if isinstance(node, ast.BinOp) and type(node.op) in BINARY:
            return self.const(lambda: _binary(node.op, values[0], values[1]))
        if isinstance(node, ast.UnaryOp):
            ops: dict[type[ast.unaryop], Callable[[Any], Any]] = {
                ast.USub: operator.neg, ast.UAdd: operator.pos, ast.Not: operator.not_}
            return self.const(lambda: ops[type(node.op)](values[0]))
        if isinstance(node, ast.JoinedStr):
            return self.const(lambda: "".join(values))
        if isinstance(node, ast.FormattedValue):
            return self.const(lambda: _formatted(node, values))
        if isinstance(node, ast.Slice):
            return self.const(lambda: _slice(node, values))
        if isinstance(node, ast.Compare):
            return self.const(lambda: _compare(node, values))
        if isinstance(node, ast.IfExp):
            return self.value(node.body if values[0] else node.orelse, env)
        if isinstance(node, ast.BoolOp):
            return self.const(lambda: _boolean(node, values))
        return None

    def _comprehension(self, node: ast.ListComp | ast.GeneratorExp,
                       env: dict[str, Value] | None) -> Value:
        """A comprehension over constants, run: `"".join(chr(c) for c in [102, 111])`."""
        if len(node.generators) != 1:
            return None
        loop = node.generators[0]
        items = self.value(loop.iter, env)
        if loop.is_async or not isinstance(loop.target, ast.Name) \
                or not isinstance(items, _Const) or not _seq(items.value):
            return None
        made = []
        for item in items.value:
            inner = {**(env or {}), loop.target.id: _Const(item)}
            tests = [self.value(test, inner) for test in loop.ifs]
            if not all(isinstance(test, _Const) for test in tests):
                return None
            if all(test.value for test in tests if isinstance(test, _Const)):
                found = self.value(node.elt, inner)
                if not isinstance(found, _Const):
                    return None
                made.append(found.value)
            self.budget.left -= 1
            if self.budget.left <= 0:
                return None
        return self.const(lambda: tuple(made))


def _formatted(node: ast.FormattedValue, values: list[Any]) -> Any:
    value = values[0]
    spec = _template(values[1]) if node.format_spec is not None else ""
    if not isinstance(value, str | bytes | int | float | bool | None):
        raise TypeError("not folded")
    convert: dict[int, Callable[[object], object]] = {-1: lambda v: v, 115: str, 114: repr,
                                                      97: ascii}
    return format(convert[node.conversion](value), spec)


def _slice(node: ast.Slice, values: list[Any]) -> slice:
    given = iter(values)
    bounds = [next(given) if part is not None else None
              for part in (node.lower, node.upper, node.step)]
    if not all(b is None or isinstance(b, int) for b in bounds):
        raise TypeError("not folded")
    return slice(*bounds)


def _compare(node: ast.Compare, values: list[Any]) -> bool:
    return all(COMPARE[type(op)](values[n], values[n + 1]) for n, op in enumerate(node.ops))


def _boolean(node: ast.BoolOp, values: list[Any]) -> Any:
    for value in values[:-1]:
        if bool(value) == isinstance(node.op, ast.Or):
            return value
    return values[-1]


def _nested(value: Value, limit: int = NESTED) -> int:
    """How deeply a value wraps others (partials of methods of ...), counted up to limit + 1."""
    if limit < 0:
        return 1
    if isinstance(value, _Method):
        return 1 + _nested(value.owner, limit - 1)
    if isinstance(value, _Partial):
        return 1 + max((_nested(v, limit - 1) for v in (value.func, *value.args)), default=0)
    return 0


def _getter(value: Value) -> str | None:
    """What a lookup function is called, where this value is one; None where it is not."""
    if isinstance(value, _Ref) and value.path in GETTERS:
        return value.path.rsplit(".", 1)[-1]
    if isinstance(value, _Method):
        return f"{value.shown}.__getattribute__"
    if isinstance(value, _NsMethod) and value.namespace.prefix is not None:
        return f"{value.namespace.shown}.{value.name}"
    if isinstance(value, _Getter) and value.names is None:
        return "attrgetter(...)"
    if isinstance(value, _Partial) and _getter(value.func) is not None \
            and any(_traced(arg) for arg in value.args):
        return f"partial({_getter(value.func)}, ...)"
    return None


def _resolve(names: _Names, budget: _Budget) -> dict[str, Value]:
    """What each assigned name stands for, settled by a work list: an assignment is evaluated
    again whenever a name it uses changes, so aliases of aliases resolve in any order the file
    binds them."""
    resolved: dict[str, Value] = {}
    evaluator = _Eval(names, resolved, budget)
    subtrees = [list(ast.walk(value)) for _, value, _ in names.assignments]
    by_name: dict[str, list[int]] = {}
    users: dict[str, list[int]] = {}
    for n, (name, _, _) in enumerate(names.assignments):
        by_name.setdefault(name, []).append(n)
        for used in {node.id for node in subtrees[n] if isinstance(node, ast.Name)}:
            users.setdefault(used, []).append(n)
    results: list[Value] = [None] * len(subtrees)
    pending = deque(range(len(subtrees)))
    queued = set(pending)
    steps = ROUNDS * len(subtrees)
    while pending and steps > 0:
        steps -= 1
        n = pending.popleft()
        queued.discard(n)
        name, value, each = names.assignments[n]
        for node in subtrees[n]:
            evaluator.memo.pop(node, None)
        evaluator.assigning = name
        for node in reversed(subtrees[n]):
            evaluator.value(node)
        evaluator.assigning = None
        got = evaluator.memo.get(value)
        results[n] = _each(got) if each else got
        now = _combined(names, name, [results[m] for m in by_name[name]])
        if now != resolved.get(name):
            if now is None:
                del resolved[name]
            else:
                resolved[name] = now
            fresh = [m for m in users.get(name, ()) if m not in queued]
            pending.extend(fresh)
            queued.update(fresh)
    return resolved


def _combined(names: _Names, name: str, results: list[Value]) -> Value:
    """A name's value from all its bindings: the last object or lookup function any of them
    gives; else, where every binding gives a constant, the constant or the few it may be."""
    objects = [r for r in results if r is not None and not isinstance(r, _Const | _Choices)]
    if objects:
        return objects[-1]
    constants: list[Value] = [r for r in results if isinstance(r, _Const | _Choices)]
    if constants and len(constants) == names.count.get(name, 0):
        return _one_of(constants)
    return None


def _each(items: Value) -> Value:
    """What a loop variable over these items may be."""
    if isinstance(items, _Const) and _seq(items.value) and 0 < len(items.value) <= CHOICES:
        return _Choices(tuple(items.value))
    return None


def _either(values: list[Value]) -> Value:
    """What `a if test else b` or `a or b` may be, where the test is not a constant: the first
    object either gives, else any of their constants."""
    objects = [v for v in values if v is not None and not isinstance(v, _Const | _Choices)]
    if objects:
        return objects[0]
    if all(isinstance(v, _Const | _Choices) for v in values):
        return _one_of(values)
    return None


def _one_of(bound: list[Value]) -> Value:
    """The constant every binding of a name gives it, or the few it may be."""
    values: list[Any] = []
    for value in bound:
        for item in value.values if isinstance(value, _Choices) else (
                value.value if isinstance(value, _Const) else None,):
            if item not in values:
                values.append(item)
    if len(values) == 1:
        return _Const(values[0])
    return _Choices(tuple(values)) if len(values) <= CHOICES else None


# --- the scan --------------------------------------------------------------------------------

class _Scan:
    """The flags of one parsed file, one per rule and line."""

    def __init__(self, file: str, tree: ast.Module, deadline: float = math.inf) -> None:
        self.file = file
        self.names = _Names(tree)
        budget = _Budget()
        self.eval = _Eval(self.names, _resolve(self.names, budget), budget)
        self.eval.settle(tree, deadline)
        self.parent = {child: node for node in ast.walk(tree)
                       for child in ast.iter_child_nodes(node)}
        if time.process_time() > deadline:
            raise _OutOfTime
        self.found: dict[tuple[int, str], FlagDoc] = {}
        nodes = list(ast.walk(tree))
        for count, node in enumerate(nodes):
            if count % DEADLINE_EVERY == 0 and time.process_time() > deadline:
                raise _OutOfTime
            self._visit(node)
        for node in nodes:  # after the literals, so that a literal names its own flag
            folded = self.eval.memo.get(node)
            if not isinstance(node, ast.Constant | ast.Name) and isinstance(folded, _Const) \
                    and isinstance(folded.value, str | bytes):
                self._string(node, folded.value)

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
        value = self.eval.memo.get(node)
        events = self.eval.events.get(node, [])
        for kind, what, construct in events:
            if kind == "reach" and construct:
                self.reached(node, what, construct)
        if isinstance(node, ast.Import):
            for alias in node.names:
                self.reached(node, alias.name, f"import {alias.name}")
        elif isinstance(node, ast.ImportFrom):
            module = node.module or ""
            for alias in node.names:
                dotted = module if alias.name == "*" else _joined(node.module, alias.name)
                self.reached(node, dotted, f"from {'.' * node.level}{module} import "
                             f"{alias.name}")
        elif isinstance(node, ast.Name):
            if isinstance(node.ctx, ast.Load):
                self._name(node, value)
        elif isinstance(node, ast.Constant):
            if isinstance(node.value, str | bytes):
                self._string(node, node.value)
        elif isinstance(node, ast.Attribute | ast.Subscript | ast.Call) \
                and (path := _path(value)) is not None:
            self.reached(node, path)
        if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Load):
            self._read_attribute(node)
        if isinstance(node, ast.Call):
            self._keywords(node)
        for kind, what, extra in sorted(events, key=lambda event: ORDER.index(event[0])):
            self._event(node, kind, what, extra)
        if isinstance(node, ast.expr):
            self._passed_on(node, value)

    def _event(self, node: ast.AST, kind: str, what: str, extra: str) -> None:
        if kind == "dynamic":
            self.flag(node, _rule(DYNAMIC), what)
        elif kind == "reach" and not extra:
            self.reached(node, what)
        elif kind == "attr":
            for rule in rules():
                if rule.names_attribute(what):
                    self.flag(node, rule, f".{what}")
        elif kind == "write":
            named = [rule for rule in rules() if what in rule.writes]
            # A module some rule names is flagged by that rule already, where it is reached.
            for rule in named or [rule for rule in rules() if ANY_LIBRARY in rule.writes
                                  and _library(what) and not rule.sets(what)
                                  and not any(other.reaches(what) for other in rules())]:
                self.flag(node, rule, f"sets {what}.{extra}" if extra else
                          f"sets {what} by a name computed at run time")

    def _read_attribute(self, node: ast.Attribute) -> None:
        """An attribute read on any object and not called there (`m.modules[...]`, where
        `model.modules()` is a call): the rules' `read_attributes`."""
        parent = self.parent.get(node)
        if isinstance(parent, ast.Call) and parent.func is node:
            return
        for rule in rules():
            if node.attr in rule.read_attributes:
                self.flag(node, rule, f".{node.attr}")

    def _keywords(self, node: ast.Call) -> None:
        """A keyword argument that some rule names, in any call at all (`stack_info=True`,
        which has logging format the caller chain into text): the rules' `keywords`."""
        for keyword in node.keywords:
            for rule in rules():
                if keyword.arg is not None and keyword.arg in rule.keywords:
                    self.flag(node, rule, f"{keyword.arg}=")

    def _name(self, node: ast.Name, value: Value) -> None:
        if self.names.builtin(node.id):
            for rule in rules():
                if node.id in rule.builtins:
                    self.flag(node, rule, node.id)
            if node.id not in BUILTIN_NAMES:
                for module in self.names.star:
                    self.reached(node, _joined(module, node.id))
        elif (path := _path(value)) is not None:
            self.reached(node, path)

    def _passed_on(self, node: ast.expr, value: Value) -> None:
        """A namespace of a module, or a lookup function, used anywhere but where the scan
        follows it is used in a way whose names cannot be known: a dynamic lookup."""
        what = value.shown if isinstance(value, _Namespace) and value.prefix is not None \
            else _getter(value)
        if what is not None and not self._followed(node):
            self.flag(node, _rule(DYNAMIC), what)

    def _followed(self, node: ast.expr) -> bool:
        """Whether the scan follows what its parent does with this node: call it, index it,
        read an attribute, hand it to getattr, partial or reduce, assign it to a name, test
        membership in it, or drop it."""
        parent = self.parent.get(node)
        if isinstance(parent, ast.Call):
            return node is parent.func or node in parent.args[:1] and (
                _path(self.eval.memo.get(parent.func)) in TAKES_FIRST)
        if isinstance(parent, ast.Subscript | ast.Attribute | ast.AnnAssign | ast.NamedExpr):
            return node is parent.value and (
                not isinstance(parent, ast.AnnAssign | ast.NamedExpr)
                or isinstance(parent.target, ast.Name))
        if isinstance(parent, ast.Assign):
            return node is parent.value \
                and all(isinstance(target, ast.Name) for target in parent.targets)
        if isinstance(parent, ast.Compare):
            return node in parent.comparators \
                and all(isinstance(op, ast.In | ast.NotIn) for op in parent.ops)
        return isinstance(parent, ast.Expr)

    def _string(self, node: ast.AST, value: str | bytes) -> None:
        said = value if isinstance(value, str) else value.decode("latin-1")
        for rule in rules():
            if any(text in said for text in rule.strings):
                shown = said if len(said) <= STRING_SHOWN else said[:STRING_SHOWN - 3] + "..."
                self.flag(node, rule, f"the string {shown!r}")


class _OutOfTime(Exception):
    """The scan's CPU time for a submission ran out."""


SCAN_CPU_S = 5.0
"""The CPU seconds the scan spends on one submission, all its files together: past them, each
file left is one flag (not reviewed), so no submission holds up a batch for long."""
SCAN_FILE_BYTES = 256 * 1024
"""The largest file the scan reads (an exercise file is a few KiB): one flag says a larger
one was not reviewed, and parsing it cannot eat the submission's time."""
DEADLINE_EVERY = 256
"""How many nodes the scan visits between two looks at the clock."""


def scan_source(file: str, source: bytes, deadline: float = math.inf) -> list[FlagDoc]:
    """The flags of one file's source, in line order; a file that does not parse is one
    flag itself, and so is one the scan had no time left for (`deadline`, in
    time.process_time seconds)."""
    rule = _rule(NOT_REVIEWED)
    if len(source) > SCAN_FILE_BYTES:
        return [{"file": file, "line": 0, "rule": rule.id,
                 "construct": f"larger than the {SCAN_FILE_BYTES >> 10} KiB the scan reads",
                 "reason": rule.reason}]
    try:
        if time.process_time() > deadline:
            raise _OutOfTime
        return _scanned(file, source, deadline)
    except _OutOfTime:
        return [{"file": file, "line": 0, "rule": rule.id,
                 "construct": f"more code than the scan reviews in {SCAN_CPU_S:g} s",
                 "reason": rule.reason}]


def _scanned(file: str, source: bytes, deadline: float) -> list[FlagDoc]:
    """The flags of a file's UTF-8 text, the text the grader runs (python_source)."""
    not_parsed = _rule(NOT_PARSED)
    try:
        text = source_text(source)
    except NotText as exc:
        return [{"file": file, "line": exc.line, "rule": not_parsed.id, "construct": str(exc),
                 "reason": not_parsed.reason}]
    try:
        with warnings.catch_warnings():  # an invalid escape in their strings is not our news
            warnings.simplefilter("ignore")
            tree = ast.parse(text, filename=file)
    except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:
        what = getattr(exc, "msg", None) or str(exc)
        return [{"file": file, "line": getattr(exc, "lineno", None) or 0,
                 "rule": not_parsed.id,
                 "construct": f"{type(exc).__name__}: {what}" if what else type(exc).__name__,
                 "reason": not_parsed.reason}]
    _spell_out_patterns(tree)
    found = _Scan(file, tree, deadline).found
    misled = _rule(MISLEADING)
    shown: list[FlagDoc] = [{"file": file, "line": line, "rule": misled.id, "construct": what,
                             "reason": misled.reason} for line, what in misleading(source, text)]
    return sorted([*shown, *(found[key] for key in sorted(found))], key=lambda f: f["line"])


SELF_MATCHING = frozenset({"bool", "bytearray", "bytes", "dict", "float", "frozenset", "int",
                           "list", "set", "str", "tuple"})
"""The classes whose one positional pattern matches the subject itself (`case int(n)`)."""
MATCH_ARG = "__match_args__"


def _spell_out_patterns(tree: ast.Module) -> None:
    """Write what each `case` pattern reads as the statements that read it, at the start of
    the case's body, so that every rule sees them: a class pattern reads attributes (`case
    object(system=run)` on os is `run = os.system`), a mapping pattern items (`case {"k": v}`
    is `v = subject["k"]`), a positional class pattern attributes named by `__match_args__`,
    which the scan cannot know (a lookup by a name computed at run time), a sequence pattern
    elements, and `as` binds the whole. The tree is changed in place; line numbers stay the
    pattern's."""
    for match in [node for node in ast.walk(tree) if isinstance(node, ast.Match)]:
        for case in match.cases:
            reads: list[ast.stmt] = []
            _pattern_reads(case.pattern, match.subject, reads)
            for statement in reads:
                ast.copy_location(statement, case.pattern)
                ast.fix_missing_locations(statement)
            case.body[:0] = reads


def _pattern_reads(pattern: ast.pattern, subject: ast.expr, reads: list[ast.stmt]) -> None:
    def bind(name: str | None, value: ast.expr) -> None:
        reads.append(ast.Assign([ast.Name(name, ast.Store())], value) if name
                     else ast.Expr(value))

    read: ast.expr
    if isinstance(pattern, ast.MatchAs):
        if pattern.pattern is not None:
            _pattern_reads(pattern.pattern, subject, reads)
        if pattern.name:
            bind(pattern.name, copy.deepcopy(subject))
    elif isinstance(pattern, ast.MatchOr):
        for each in pattern.patterns:
            _pattern_reads(each, subject, reads)
    elif isinstance(pattern, ast.MatchClass):
        for attr, inner in zip(pattern.kwd_attrs, pattern.kwd_patterns, strict=True):
            read = ast.Attribute(copy.deepcopy(subject), attr, ast.Load())
            _inner_reads(inner, read, reads, bind)
        called = pattern.cls.id if isinstance(pattern.cls, ast.Name) else ""
        for inner in pattern.patterns:
            read = copy.deepcopy(subject) if called in SELF_MATCHING else ast.Call(
                ast.Name("getattr", ast.Load()),
                [copy.deepcopy(subject), ast.Name(MATCH_ARG, ast.Load())], [])
            _inner_reads(inner, read, reads, bind)
    elif isinstance(pattern, ast.MatchMapping):
        for key, inner in zip(pattern.keys, pattern.patterns, strict=True):
            read = ast.Subscript(copy.deepcopy(subject), copy.deepcopy(key), ast.Load())
            _inner_reads(inner, read, reads, bind)
        if pattern.rest:
            bind(pattern.rest, copy.deepcopy(subject))
    elif isinstance(pattern, ast.MatchSequence):
        for index, inner in enumerate(pattern.patterns):
            read = ast.Subscript(copy.deepcopy(subject), ast.Constant(index), ast.Load())
            _inner_reads(inner, read, reads, bind)


def _inner_reads(inner: ast.pattern, read: ast.expr, reads: list[ast.stmt],
                 bind: Callable[[str | None, ast.expr], None]) -> None:
    """A sub-pattern's reads on `read`; a read whose value is bound or matched by nothing
    further is kept as a statement of its own (the read happens all the same)."""
    if isinstance(inner, ast.MatchAs) and inner.pattern is None:
        bind(inner.name, read)
        return
    bind(None, read)
    _pattern_reads(inner, read, reads)


def scan_folder(folder: Path) -> list[FlagDoc]:
    """The flags of every Python file below `folder` (a staged exercises/ folder), by file
    name, then line, within SCAN_CPU_S of CPU time for them all; and one for each module
    handed in compiled (a bytecode cache in __pycache__ is Python's own, and not one)."""
    deadline = time.process_time() + SCAN_CPU_S
    flags: list[FlagDoc] = []
    compiled = _rule(COMPILED)
    for path in sorted(folder.rglob("*")):
        if not path.is_file() or path.is_symlink():
            continue
        name = path.relative_to(folder).as_posix()
        if path.suffix == ".py":
            flags += scan_source(name, path.read_bytes(), deadline)
        elif path.name.endswith(COMPILED_SUFFIXES) and "__pycache__" not in name.split("/"):
            flags.append({"file": name, "line": 0, "rule": compiled.id,
                          "construct": "compiled module", "reason": compiled.reason})
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
