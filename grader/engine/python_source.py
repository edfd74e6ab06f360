"""A handed-in Python file as people read it, which is the text the grader runs and reviews.

Python decodes a source file by the coding declaration on its first two lines: under `# -*-
coding: utf-7 -*-`, `# notes: +AAo-return W` is a comment to an editor, a diff, GitHub and the
review's reader, and to Python a newline and a line of code. So the grader decodes every
handed-in file as UTF-8 (a leading byte-order mark dropped), whatever it declares, and compiles
that text: Python ignores a declaration in text it is given already decoded. Where the bytes
are not UTF-8, a one-byte encoding the file declares is read where each byte shows as it
reads (latin-1 above an accented name); any other file is refused, saying where (`NotText`).

Some text reads differently on some screens: a carriage return that ends no line, Unicode's
bidirectional controls ("Trojan Source"), characters that show as nothing, names Python reads
as others. Python runs what is there; the review flags each (`misleading`) so that a coach
knows to read the file's bytes.
"""

from __future__ import annotations

import codecs
import io
import re
import tokenize
import unicodedata

DECLARATION = re.compile(rb"^[ \t\f]*#.*?coding[:=][ \t]*([-\w.]+)")
"""PEP 263's coding declaration, looked for on a file's first two lines."""
BIDI_CONTROLS = frozenset("\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e"
                          "\u2066\u2067\u2068\u2069")
"""The characters that change the order in which the text around them is shown."""


class NotText(ValueError):
    """A file the grader reads no text from, with the line of its first byte that is none."""

    def __init__(self, line: int, why: str) -> None:
        super().__init__(why)
        self.line = line


def source_text(data: bytes) -> str:
    """The file's text: UTF-8, or, where its bytes are not UTF-8, the one-byte-per-character
    encoding it declares (`# -*- coding: latin-1 -*-` above an accented name), which every
    editor that honours the declaration shows as Python reads it. Any other declared encoding
    (UTF-7, `unicode_escape`, the escape-switching ISO-2022 ones) can make what shows as a
    comment decode to code: NotText."""
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        declared = _declared(data)
        if declared is not None and _one_byte(declared[1]) \
                and _shows_as_read(data, declared[1]):
            return data.decode(declared[1])
        line = data.count(b"\n", 0, exc.start) + 1
        raise NotText(line, f"byte {data[exc.start]:#04x} on line {line} is not UTF-8 "
                            "text") from None


ONE_BYTE = ("iso8859-", "cp125", "cp437", "cp850", "mac-", "koi8-", "latin")
"""The codecs (by their normalised names) that map each byte to one character, the same
wherever it stands: text in them shows in an editor as Python decodes it."""


def _shows_as_read(data: bytes, encoding: str) -> bool:
    """Whether each byte of the file reads in `encoding` as what a viewer that does not know
    it would show: ASCII as itself, every other byte as a letter or sign that is no ASCII
    (mac-arabic reads 0xA2 as `"`, where any other viewer shows a symbol: a string that
    closes unseen)."""
    for byte in set(data):
        shown = bytes([byte]).decode(encoding, errors="replace")
        if byte < 0x80:
            if shown != chr(byte):
                return False
        elif shown.isascii() or unicodedata.category(shown)[0] in "CZ":
            return False
    return True


def _one_byte(encoding: str) -> bool:
    try:
        name = codecs.lookup(encoding).name
    except LookupError:
        return False
    return name.startswith(ONE_BYTE)


def _declared(data: bytes) -> tuple[int, str] | None:
    """(line, encoding) that the first two lines declare (PEP 263), if they do: Python looks
    at the second line only after a comment or a blank one."""
    for number, line in enumerate(data.split(b"\n", 2)[:2], start=1):
        found = DECLARATION.match(line)
        if found:
            return number, found.group(1).decode("ascii", "replace")
        if line.strip(b" \t\f\r") and not line.lstrip(b" \t\f").startswith(b"#"):
            return None
    return None


def misleading(data: bytes, text: str) -> list[tuple[int, str]]:
    """(line, what) for each thing in a UTF-8 file that shows other than Python reads it: a
    declared encoding under which the file reads as other text, a carriage return that ends no
    line, a bidirectional control, any other character that shows as nothing or moves the
    cursor (a zero-width space in a string, a vertical tab in a comment), and a name that
    Python reads as another (`ｐrefix` is `prefix`: names are compared in NFKC form). Lines
    are counted by newline, as `cat -n` and `grep -n` count them. `text`: the file's
    (source_text)."""
    found: list[tuple[int, str]] = []
    declared = _declared(data.removeprefix(b"\xef\xbb\xbf"))
    if declared is not None and not _one_byte(declared[1]) \
            and _read_as(data, declared[1]) != text:
        found.append((declared[0], f"declares the encoding {declared[1]!r}, in which it reads "
                                   "as other text (graded as UTF-8)"))
    for number, line in enumerate(text.split("\n"), start=1):
        found += [(number, what) for what in _unseen(line)]
    found += _renamed(text)
    return sorted(found, key=lambda item: item[0])


DEFAULT_IGNORABLE = ((0x00AD, 0x00AD), (0x034F, 0x034F), (0x115F, 0x1160), (0x17B4, 0x17B5),
                     (0x180B, 0x180F), (0x200B, 0x200F), (0x2060, 0x206F), (0x3164, 0x3164),
                     (0xFE00, 0xFE0F), (0xFEFF, 0xFEFF), (0xFFA0, 0xFFA0), (0xFFF0, 0xFFF8),
                     (0x1BCA0, 0x1BCA3), (0x1D173, 0x1D17A), (0xE0000, 0xE0FFF))
"""Unicode's default-ignorable code points: characters a renderer shows as nothing (variation
selectors, Hangul fillers, joiners), whatever their category; a name that ends in one is
another name that looks the same."""


def _invisible(c: str) -> bool:
    return any(low <= ord(c) <= high for low, high in DEFAULT_IGNORABLE)


def _unseen(line: str) -> list[str]:
    """What in one line (its newline left out) is not shown as itself."""
    said = []
    body = line.removesuffix("\r")
    indent = body[:len(body) - len(body.lstrip(" \t"))]
    if " " in indent and "\t" in indent:
        said.append("indentation of tabs and spaces mixed (its depth depends on the tab "
                    "width)")
    if "\r" in body:
        said.append("a carriage return inside the line (a terminal prints what follows it over "
                    "what precedes it)")
    controls = sorted({f"U+{ord(c):04X}" for c in body if c in BIDI_CONTROLS})
    if controls:
        said.append(f"bidirectional control {', '.join(controls)} (the line is shown in "
                    "another order)")
    page_break = body.strip(" \t\f") == ""  # a form feed alone on its line: a page break
    kinds = {"Cc": "control character", "Cf": "invisible character",
             "Zl": "line separator", "Zp": "paragraph separator"}
    for kind in dict.fromkeys(kinds.values()):
        hidden = sorted({f"U+{ord(c):04X}" for c in body
                         if kinds.get(unicodedata.category(c), "invisible character"
                                      if _invisible(c) else "") == kind
                         and c not in BIDI_CONTROLS and c not in "\t\r"
                         and not (c == "\f" and page_break)})
        if hidden:
            said.append(f"{kind} {', '.join(hidden)}")
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
                    found.append((token.start[0], f"the name {token.string!r}, which Python "
                                                  f"reads as {read!r}"))
                elif any(unicodedata.bidirectional(c) in ("R", "AL") for c in read):
                    found.append((token.start[0], f"the right-to-left name {read!r} (the "
                                                  "line around it may show in another "
                                                  "order)"))
    except (tokenize.TokenError, SyntaxError, ValueError):
        pass
    return found


def _read_as(data: bytes, encoding: str) -> str | None:
    """The file's text in `encoding`, as Python alone would read it (None where it cannot)."""
    try:
        return data.removeprefix(b"\xef\xbb\xbf").decode(encoding)
    except (LookupError, UnicodeDecodeError, UnicodeError):
        return None
