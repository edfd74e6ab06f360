"""A handed-in Python file as people read it, which is the text the grader runs and reviews.

Python decodes a source file by the coding declaration on its first two lines: under `# -*-
coding: utf-7 -*-`, `# notes: +AAo-return W` is a comment to an editor, a diff, GitHub and the
review's reader, and to Python a newline and a line of code. So the grader decodes every
handed-in file as UTF-8 (a leading byte-order mark dropped), whatever it declares, and compiles
that text: Python ignores a declaration in text it is given already decoded. A file that is
not UTF-8 is refused, saying so.

Some text reads differently on some screens: a carriage return that ends no line (a terminal
prints what follows over what came before) and Unicode's bidirectional controls (which reorder
what is shown around them: "Trojan Source"). Python runs what is there; the review flags each
(`misleading`) so that a coach knows to read the file's bytes.
"""

from __future__ import annotations

import re

DECLARATION = re.compile(rb"^[ \t\f]*#.*?coding[:=][ \t]*([-\w.]+)")
"""PEP 263's coding declaration, looked for on a file's first two lines."""
BIDI_CONTROLS = frozenset("\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e"
                          "\u2066\u2067\u2068\u2069")
"""The characters that change the order in which the text around them is shown."""


def readable_text(data: bytes) -> str:
    """The file's text as UTF-8 (UnicodeDecodeError where it is not)."""
    return data.decode("utf-8-sig")


def undecodable(data: bytes) -> tuple[int, str] | None:
    """(line, why) where the file is not UTF-8 text; None where it is."""
    try:
        readable_text(data)
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        return line, f"byte {data[exc.start]:#04x} on line {line} is not UTF-8 text"
    return None


def misleading(data: bytes) -> list[tuple[int, str]]:
    """(line, what) for each thing in a UTF-8 file that shows other than Python reads it: a
    declared encoding other than UTF-8 (the grader reads the file as UTF-8, Python alone would
    not), a carriage return that ends no line, a bidirectional control. Lines are counted
    by newline, as `cat -n` and `grep -n` count them."""
    found: list[tuple[int, str]] = []
    text = readable_text(data)
    for number, line in enumerate(text.split("\n", 2)[:2], start=1):
        declared = DECLARATION.match(line.encode())
        if declared and _read_as(data, declared.group(1).decode()) != text:
            found.append((number, f"declares the encoding {declared.group(1).decode()!r}, in "
                                  "which the file reads as other text (the grader runs and "
                                  "reviews the UTF-8 text shown)"))
        if declared or line.strip(" \t\f\r") and not line.lstrip(" \t\f").startswith("#"):
            break  # Python looks at the second line only after a comment or a blank one
    for number, line in enumerate(text.split("\n"), start=1):
        if "\r" in line.removesuffix("\r"):
            found.append((number, "a carriage return inside a line: a terminal shows what "
                                  "follows it over what precedes it"))
        controls = sorted({f"U+{ord(c):04X}" for c in line if c in BIDI_CONTROLS})
        if controls:
            found.append((number, f"bidirectional control {', '.join(controls)}: the line is "
                                  "shown in another order than Python reads it"))
    return found


def _read_as(data: bytes, encoding: str) -> str | None:
    """The file's text in `encoding`, as Python alone would read it (None where it cannot)."""
    try:
        return data.removeprefix(b"\xef\xbb\xbf").decode(encoding)
    except (LookupError, UnicodeDecodeError, UnicodeError):
        return None
