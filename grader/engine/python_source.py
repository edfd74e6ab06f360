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

import io
import re
import tokenize
import unicodedata

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
    declared encoding under which the file reads as other text, a carriage return that ends no
    line, a bidirectional control, any other character that shows as nothing or moves the
    cursor (a zero-width space in a string, a vertical tab in a comment), and a name that
    Python reads as another (`ｐrefix` is `prefix`: names are compared in NFKC form). Lines
    are counted by newline, as `cat -n` and `grep -n` count them."""
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
        found += [(number, what) for what in _unseen(line)]
    found += _renamed(text)
    return sorted(found, key=lambda item: item[0])


def _unseen(line: str) -> list[str]:
    """What in one line (its newline left out) is not shown as itself."""
    said = []
    body = line.removesuffix("\r")
    if "\r" in body:
        said.append("a carriage return inside a line: a terminal shows what follows it over "
                    "what precedes it")
    controls = sorted({f"U+{ord(c):04X}" for c in body if c in BIDI_CONTROLS})
    if controls:
        said.append(f"bidirectional control {', '.join(controls)}: the line is shown in "
                    "another order than Python reads it")
    page_break = body.strip(" \t\f") == ""  # a form feed alone on its line: a page break
    hidden = sorted({f"U+{ord(c):04X}" for c in body
                     if unicodedata.category(c) in ("Cc", "Cf") and c not in BIDI_CONTROLS
                     and c not in "\t\r" and not (c == "\f" and page_break)})
    if hidden:
        said.append(f"invisible or control character {', '.join(hidden)}: it shows as "
                    "nothing, or moves what follows it")
    return said


def _renamed(text: str) -> list[tuple[int, str]]:
    """Each name spelled other than Python reads it, with its line (none where the text does
    not tokenize: that is a syntax error, said elsewhere)."""
    found: list[tuple[int, str]] = []
    if text.isascii():
        return found
    try:
        for token in tokenize.generate_tokens(io.StringIO(text).readline):
            if token.type == tokenize.NAME and not token.string.isascii():
                read = unicodedata.normalize("NFKC", token.string)
                if read != token.string:
                    found.append((token.start[0], f"the name {token.string!r} is {read!r} to "
                                                  "Python (names are compared in NFKC form)"))
    except (tokenize.TokenError, SyntaxError, ValueError):
        pass
    return found


def _read_as(data: bytes, encoding: str) -> str | None:
    """The file's text in `encoding`, as Python alone would read it (None where it cannot)."""
    try:
        return data.removeprefix(b"\xef\xbb\xbf").decode(encoding)
    except (LookupError, UnicodeDecodeError, UnicodeError):
        return None
