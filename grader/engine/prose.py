"""A round's prose files: explain topics and follow-ups, markdown with a small front matter.

    ---
    summary: why writing into a tensor autograd saved makes backward fail
    matches: modified by an inplace operation
    ---
    ## explanation
    Every tensor has a version counter ...

    ```python
    print("a live demonstration")
    ```

Front matter is `key: value` lines. The body is split into `## name` sections; each holds
paragraphs (lines joined with spaces, a blank line between paragraphs, an indented line kept as
it is) and fenced ```python blocks, which `grader explain` runs as live demonstrations. Nothing
here imports torch or rich.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

from grader.engine.rounds import Round, RoundError

FENCE = "```"


@dataclass(frozen=True)
class Block:
    """A paragraph of prose, or (code=True) a python block to run."""

    text: str
    code: bool = False


@dataclass(frozen=True)
class Document:
    """A parsed prose file: its front matter and its sections, in order."""

    name: str
    source: str
    meta: dict[str, str]
    sections: dict[str, tuple[Block, ...]] = field(default_factory=dict)

    def has(self, section: str) -> bool:
        return section in self.sections

    def text(self, section: str) -> str:
        """A section's prose, paragraphs separated by blank lines (code blocks left out)."""
        if section not in self.sections:
            raise RoundError(f"{self.source}: no section '## {section}'")
        return "\n\n".join(b.text for b in self.sections[section] if not b.code)

    def listed(self, key: str) -> tuple[str, ...]:
        """A comma-separated front-matter value as a tuple."""
        return tuple(v.strip() for v in self.meta.get(key, "").split(",") if v.strip())


def _paragraphs(lines: list[str]) -> list[str]:
    """Join wrapped lines; a blank line ends a paragraph; an indented line (code in prose,
    a near-solution) keeps its own line."""
    paragraphs: list[str] = []
    current: list[str] = []
    for line in lines + [""]:
        if not line.strip():
            if current:
                paragraphs.append("".join(current).strip("\n"))
                current = []
            continue
        if line.startswith("    "):
            joiner = "\n" if current and not current[-1].endswith("\n") else ""
            current.append(joiner + line[4:] + "\n")
        else:
            joiner = " " if current and not current[-1].endswith("\n") else ""
            current.append(joiner + line.strip())
    return [p.strip() for p in paragraphs]


def parse(text: str, source: str) -> Document:
    """Parse one prose file (`source` is its path); a malformed one raises RoundError naming
    it. The document's name is the file's stem."""
    name = Path(source).stem
    lines = text.splitlines()
    meta: dict[str, str] = {}
    if lines and lines[0].strip() == "---":
        try:
            end = lines.index("---", 1)
        except ValueError as exc:
            raise RoundError(f"{source}: front matter is not closed with ---") from exc
        for line in lines[1:end]:
            key, sep, value = line.partition(":")
            if not sep:
                raise RoundError(f"{source}: front matter line without 'key: value': {line!r}")
            meta[key.strip()] = value.strip()
        lines = lines[end + 1:]
    sections: dict[str, list[Block]] = {}
    current: list[Block] | None = None
    prose: list[str] = []
    code: list[str] | None = None

    def flush() -> None:
        if current is not None:
            current.extend(Block(p) for p in _paragraphs(prose))
        prose.clear()

    for line in lines:
        if code is not None:
            if line.strip() == FENCE:
                assert current is not None
                current.append(Block("\n".join(code), code=True))
                code = None
            else:
                code.append(line)
        elif line.startswith("## "):
            flush()
            current = sections.setdefault(line[3:].strip().lower(), [])
        elif line.strip().startswith(FENCE):
            if current is None:
                raise RoundError(f"{source}: a code block before the first ## section")
            flush()
            code = []
        elif current is None:
            if line.strip():
                raise RoundError(f"{source}: text before the first ## section: {line.strip()!r}")
        else:
            prose.append(line)
    if code is not None:
        raise RoundError(f"{source}: a code block is not closed")
    flush()
    return Document(name, source, meta, {k: tuple(v) for k, v in sections.items()})


def fill(template: str, values: dict[str, object]) -> str | None:
    """`template` with its {placeholders} filled from `values`; None when one is missing (a
    measured sentence whose measurement is not there)."""
    names = re.findall(r"{(\w+)}", template)
    if any(n not in values for n in names):
        return None
    return re.sub(r"{(\w+)}", lambda m: str(values[m.group(1)]), template)


@cache
def load_folder(folder: Path) -> dict[str, Document]:
    """Every .md file of a folder, by file stem."""
    if not folder.is_dir():
        return {}
    return {p.stem: parse(p.read_text(), str(p)) for p in sorted(folder.glob("*.md"))}


def topics(round_: Round) -> dict[str, Document]:
    return load_folder(round_.topics_dir)


def followups(round_: Round) -> dict[str, Document]:
    return load_folder(round_.followups_dir)


def error_topic(round_: Round, message: str) -> Document | None:
    """The round's topic whose `matches` pattern finds torch's error message (a regex, since
    the wording and its "Hint: ..." tail change between torch versions)."""
    for topic in topics(round_).values():
        pattern = topic.meta.get("matches")
        if pattern and re.search(pattern, message):
            return topic
    return None
