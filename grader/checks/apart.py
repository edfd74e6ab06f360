"""The lines where a candidate's file stands apart from a working solution's.

Most wrong answers are the right code with one slip in it, and the mutants (mutants.py) name
the slips their operators make. A slip no operator makes (`and` for `or` in a guard, `%` for
`//`, a parenthesis moved, `cumprod` for a product, a sibling key read) stays unnamed there,
yet a file that is the working solution with one or two lines changed shows those lines
directly: its statements, read in order, line up with the reference's, names aside, except at
them. Where they do, a failing check's hint adds them, each beside the reference's statement in
the candidate's own names. This is a fact about the file, not a guess about the cause: where
the file was written another way (more than MOST_APART statements apart), nothing is added.

Judge side: the file is only read and parsed, never run.
"""

from __future__ import annotations

import ast
import difflib
import functools
import itertools
import tomllib
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from grader.checks.mutants import (
    BLOCKS,
    MOST_STATEMENTS,
    bindings,
    cut_line,
    head_line,
    parse_line,
    shape,
    shown_pair,
    statement_head,
)

SENTENCES_FILE = Path(__file__).with_name("apart.toml")
MOST_APART = 2
"""The most statements a file may stand apart at for them to be shown: a slip made twice (the
same typo on two lines), or one line changed and one added; past that, the file is another
way of writing it, and lining it up with the reference's says nothing."""
HINTED = frozenset({"failed", "error", "timeout"})
"""The statuses whose hint names the lines apart: a check the code did not pass."""


@dataclass(frozen=True)
class Statement:
    """One statement as compared: its first line as `ast.unparse` writes it (a compound
    statement's header), its shape with names numbered (mutants.shape), its names in order of
    appearance, and the function it is in ("" at module level)."""

    text: str
    shape: str
    names: tuple[str, ...]
    owner: str = ""


@dataclass(frozen=True)
class Apart:
    """One place the file stands apart: its own line (None where a statement of the reference
    is missing), the reference's in the file's names (None where the file has a statement
    the reference does not), and for a missing one, the file's line it would follow."""

    own: str | None
    fix: str | None
    follows: str | None = None


def _in_order(body: Sequence[ast.stmt], owner: str = "") -> Iterator[tuple[ast.stmt, str]]:
    """A body's statements in the order they are written, each compound statement before
    the statements of its blocks, with the function each is in; docstrings and imports left
    out (a file may import more or document itself otherwise without computing anything
    else)."""
    for node in body:
        if isinstance(node, ast.Import | ast.ImportFrom):
            continue
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) \
                and isinstance(node.value.value, str):
            continue
        yield node, owner
        inner = f"{owner}.{node.name}".lstrip(".") if isinstance(
            node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) else owner
        for field in BLOCKS:
            yield from _in_order(getattr(node, field, None) or [], inner)
        for handler in getattr(node, "handlers", None) or []:
            yield from _in_order(handler.body, inner)
        for case in getattr(node, "cases", None) or []:
            yield from _in_order(case.body, inner)


def _statement(node: ast.stmt, owner: str) -> Statement | None:
    """How a statement is compared; a definition by its name and its parameters' count, its
    parameters' names paired like variables (a file may call them otherwise)."""
    text = statement_head(node)
    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
        params = [a.arg for a in (*node.args.posonlyargs, *node.args.args,
                                  *node.args.kwonlyargs)]
        return Statement(text, f"def {node.name}/{len(params)}", tuple(params), owner)
    found, tree = shape(text), parse_line(text)
    if found is None or tree is None:
        return None
    names = tuple(n.id for n in ast.walk(tree) if isinstance(n, ast.Name))
    return Statement(text, found, names, owner)


@functools.lru_cache(maxsize=32)
def _statements(source: str) -> tuple[Statement, ...] | None:
    """A file's statements as compared, in order; None where it does not parse or has more
    than MOST_STATEMENTS."""
    try:
        tree = ast.parse(source)
        nodes = list(itertools.islice(_in_order(tree.body), MOST_STATEMENTS + 1))
        if len(nodes) > MOST_STATEMENTS:
            return None
        found = [_statement(node, owner) for node, owner in nodes]
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    return tuple(s for s in found if s is not None)


@functools.lru_cache(maxsize=32)
def _bound(source: str) -> frozenset[str]:
    """The names a file binds itself (assigned, parameters, loop and `with` targets,
    definitions): the ones another file may call otherwise. A name it only reads (a builtin,
    an imported module) means what it says: `int` for `float` is a difference, not a name."""
    return frozenset(bindings(ast.parse(source), imports=False))


def _names(mine: Sequence[Statement], theirs: Sequence[Statement],
           pairs: Sequence[tuple[int, int]], bound: tuple[frozenset[str], frozenset[str]]
           ) -> dict[str, str]:
    """The file's names for the reference's, as the lined-up statements pair them: each name
    both files bind with the reference name it stands for most often, one file name per
    reference name (the one seen with it most); every other name stands for itself."""
    votes = Counter(pair for i, j in pairs
                    for pair in zip(mine[i].names, theirs[j].names, strict=True)
                    if pair[0] in bound[0] and pair[1] in bound[1])
    mapping: dict[str, str] = {}
    taken: set[str] = set()
    for (own, ref), _ in votes.most_common():
        if own not in mapping and ref not in taken:
            mapping[own] = ref
            taken.add(ref)
    return mapping


def _in_names(statement: Statement, names: dict[str, str]) -> str:
    """A reference statement with its names in the file's (those the file has); a
    definition's line as the reference has it."""
    tree = parse_line(statement.text)
    if statement.shape.startswith("def ") or tree is None:
        return statement.text
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            node.id = names.get(node.id, node.id)
    return head_line(ast.unparse(tree))


def _places(source: str, reference: str
            ) -> tuple[list[tuple[int | None, int | None]], list[tuple[int, int]],
                       dict[str, str]] | None:
    """Where the file stands apart from the reference (file index, reference index; None on
    the side that lacks the statement), the statements lined up, and the file's names for
    the reference's; None where either does not parse, or they stand apart at more than
    MOST_APART places."""
    mine, theirs = _statements(source), _statements(reference)
    if not mine or not theirs:
        return None
    matcher = difflib.SequenceMatcher(None, [s.shape for s in mine], [s.shape for s in theirs],
                                      autojunk=False)
    pairs: list[tuple[int, int]] = []
    places: list[tuple[int | None, int | None]] = []
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal" or (tag == "replace" and i2 - i1 == j2 - j1):
            (pairs if tag == "equal" else places).extend(zip(range(i1, i2), range(j1, j2),
                                                             strict=True))
        else:
            places.extend((i, None) for i in range(i1, i2))
            places.extend((None, j) for j in range(j1, j2))
        if len(places) > MOST_APART:
            return None
    bound = _bound(source), _bound(reference)
    names = _names(mine, theirs, pairs, bound)
    backwards = {ref: own for own, ref in names.items()}

    def same(own: str, ref: str) -> bool:
        if own in bound[0] and ref in bound[1]:
            return names.get(own) == ref and backwards.get(ref) == own
        return own == ref

    renamed = [(i, j) for i, j in pairs if not all(
        same(own, ref) for own, ref in zip(mine[i].names, theirs[j].names, strict=True))]
    places.extend(renamed)
    if len(places) > MOST_APART:
        return None
    return places, [p for p in pairs if p not in renamed], backwards


def imported_files(source: str) -> tuple[str, ...]:
    """The files of the same folder a file imports (`from .part1 import f`, `from
    exercises.part1 import f`, `import exercises.part1`), by file name; none where it does not
    parse."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return ()
    modules = [n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)
               and n.module and (n.level == 1 or n.module.startswith("exercises."))]
    modules += [a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names
                if a.name.startswith("exercises.")]
    return tuple(dict.fromkeys(f"{m.removeprefix('exercises.')}.py" for m in modules
                               if "." not in m.removeprefix("exercises.")))


def same_code(source: str, reference: str) -> bool:
    """Whether the file is the reference, statement by statement, names aside."""
    found = _places(source, reference)
    return found is not None and not found[0]


MOST_LINED_UP_NEEDED = 3
"""How many statements of the function a place is in must line up with the reference's for
the place to be shown: a function of one or two statements written otherwise (`return W`,
`pass`, a docstring alone) is not a slip in written code, and the reference's statement
beside it would be the answer."""


def lines_apart(source: str, reference: str) -> tuple[Apart, ...]:
    """Where the file `source` stands apart from `reference`, in its order: empty where it
    stands apart nowhere (the cause lies elsewhere), or at more than MOST_APART statements,
    or in a function too little of which lines up (MOST_LINED_UP_NEEDED), or at a stub's
    line, or either does not parse."""
    found = _places(source, reference)
    mine, theirs = _statements(source), _statements(reference)
    if found is None or not found[0] or mine is None or theirs is None:
        return ()
    places, pairs, backwards = found
    lined_up = Counter(mine[i].owner for i, _ in pairs)
    for i, j in places:
        owner = mine[i].owner if i is not None else theirs[j].owner if j is not None else ""
        if lined_up[owner] < MOST_LINED_UP_NEEDED or (i is not None and _unfinished(mine[i])):
            return ()
    return tuple(_apart(mine, theirs, i, j, backwards)
                 for i, j in sorted(places, key=lambda p: _position(p, pairs)))


def _unfinished(statement: Statement) -> bool:
    """Whether the file's statement is a stub's (`raise NotImplementedError(...)`): a part not
    written yet is no slip, and the statement beside it would be the answer."""
    return statement.text.startswith("raise NotImplementedError")


def _position(place: tuple[int | None, int | None], pairs: Sequence[tuple[int, int]]) -> float:
    """Where a place comes in the file: its own index, or for a missing statement just after
    the file's statement lined up before it."""
    i, j = place
    if i is not None:
        return i
    before = [mine for mine, ref in pairs if j is not None and ref < j]
    return (max(before) if before else -1) + 0.5


def _apart(mine: Sequence[Statement], theirs: Sequence[Statement], i: int | None,
           j: int | None, names: dict[str, str]) -> Apart:
    fix = _in_names(theirs[j], names) if j is not None else None
    own = mine[i].text if i is not None else None
    follows = _in_names(theirs[j - 1], names) if i is None and j else None
    return Apart(own, fix, follows)


@functools.cache
def _sentences() -> dict[str, str]:
    return tomllib.loads(SENTENCES_FILE.read_text())


def describe(file: str, places: Sequence[Apart]) -> str:
    """The sentence that shows the places (apart.toml)."""
    said = _sentences()
    items = []
    for place in places:
        if place.own is not None and place.fix is not None:
            own, fix = shown_pair(place.own, place.fix)
            items.append(said["changed"].format(own=own, fix=fix))
        elif place.own is not None:
            items.append(said["extra"].format(own=cut_line(place.own)))
        elif place.follows:
            items.append(said["missing"].format(fix=cut_line(place.fix or ""),
                                                follows=cut_line(place.follows)))
        else:
            items.append(said["missing_first"].format(fix=cut_line(place.fix or "")))
    frame = said["one"] if len(items) == 1 else said["some"]
    return frame.format(file=file, count=len(items), places="; ".join(items))


def with_lines_apart(hint: str | None, file: str, places: Sequence[Apart]) -> str | None:
    """A failing check's hint with the places added, unless it already quotes each of them,
    the file's line or the reference's in backticks (a mutant's sentence naming the same
    slip; a recipe that happens to hold the same words quotes nothing)."""
    if not places:
        return hint
    if hint and all(any(line and (f"`{line}`" in hint or f"`{cut_line(line)}`" in hint)
                        for line in (place.own, place.fix)) for place in places):
        return hint
    return " ".join(filter(None, (hint, describe(file, places))))
