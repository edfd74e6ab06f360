"""Text that candidates control, made safe to show: every renderer passes it through here.

What a candidate's code printed, the messages of the exceptions it raised and the names of the
files and folders it was handed in as are the candidate's to choose. On a terminal an escape
sequence in them could clear the screen, retitle the window, forge a hyperlink or set the
clipboard (OSC 52), and rich reads `[bold red]` or `[link=...]` in a plain string as markup.
So before anything shows such text, terminal control sequences (ESC and CSI sequences, OSC,
DCS and the other string sequences, in their 7-bit and 8-bit forms), every other C0 and C1
control character but newline and tab, and Unicode's bidirectional controls (with U+202E, a
right-to-left override, in its name a file ending in .py can read as ending in .jpg: "Trojan
Source") are removed (`clean`); where rich renders, the text becomes a `Text` (`text`), which
rich never parses as markup, so markup reads as written. A CSV cell that a spreadsheet would
take for a formula gets a leading apostrophe (`csv_cell`, OWASP's advice on CSV injection).

Before any of that, text from a submission is untrusted bytes until the judge turns it into
valid, bounded text, once, where it enters (`received`): the frames a child sends are read into
typed records by grader.runner.protocol, the names of files and folders and a submitted
grader.toml by grader.coach.submissions, and a check's result once more as the CLI takes it from
the worker (grader.engine.results). There a lone surrogate (a stray half of a UTF-16 pair in an
exception's message, or a byte of a file name that is not UTF-8, which Python keeps as one)
becomes visible (`\\xff` for the byte, U+FFFD for any other), NUL goes, and text past its cap
is cut, saying how much was left out. The caps are the judge's: a limit kept in the candidate's
process (the child's capture of what it prints) is theirs to lift. So every writer is handed
text it can write; each still writes what it is given with `valid`, so that one row never makes
a writer fail for everyone.
"""

from __future__ import annotations

import os
import re
import unicodedata
from functools import partial
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # rich is imported where text is shown, never by the runner that reads frames
    from rich.text import Text

# The judge's caps, in characters, on text a submission controls (grader.runner.protocol,
# grader.engine.results, grader.coach.submissions). A child's own capture keeps 4000 characters
# of what the code printed and adds a line saying how much more there was, so an honest frame is
# never cut here; a child whose capture was lifted is.
OUTPUT_LIMIT = 4096
"""What the code printed, as one frame brings it (one check's run, or its import)."""
MESSAGE_LIMIT = 2000
"""A frame's message: what the code raised, or why its result could not be read."""
WHERE_LIMIT = 500
"""The candidate's line a hung child was on."""
DATA_TEXT_LIMIT = 64 * 1024
"""Each string in an observation's data (an EXPLANATION the judge reads)."""
CHECK_MESSAGE_LIMIT = 4000
"""A check result's message or hint as the CLI receives it (the judge's words around what a
frame brought)."""
CHECK_OUTPUT_LIMIT = 2 * (OUTPUT_LIMIT + 100)
"""A check result's printed output: two frames' worth (its import's and its own run's), with
the lines saying how much more each printed."""
PART_OUTPUT_LIMIT = 16 * 1024
"""The printed output kept over all the checks of one part of a row."""
NAME_LIMIT = 1000
"""A file or folder name, or a path, as a row shows it."""
WORD_LIMIT = 100
"""A round or flavor a submission's grader.toml names."""
NOTE_LIMIT = 2000
"""One note of a row (why a submission could not be staged, or graded)."""

_STRING_SEQUENCE = r"(?:\x1b[\]PX^_]|[\x90\x98\x9d\x9e\x9f])[^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c)"
_CSI_SEQUENCE = r"(?:\x1b\[|\x9b)[0-?]*[ -/]*[@-~]"
_ESC_SEQUENCE = r"\x1b[ -/]*[0-~]"
_CONTROL = r"[\x00-\x08\x0b-\x1f\x7f-\x9f]"
_BIDI = r"[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]"
# Whole sequences first, so their parameters go with them; then any control left on its own
# (an unterminated sequence loses its ESC, and what is left of it is harmless text).
_UNSAFE = re.compile("|".join((_STRING_SEQUENCE, _CSI_SEQUENCE, _ESC_SEQUENCE, _CONTROL,
                                _BIDI)))
# OWASP's list; its sixth, a carriage return, never survives `clean`.
FORMULA_STARTS = ("=", "+", "-", "@", "\t")

_SURROGATE = re.compile(r"[\ud800-\udfff]")
REPLACEMENT = "\ufffd"


def _shown_surrogate(found: re.Match[str]) -> str:
    """A byte that was not UTF-8 (kept by Python as U+DC80..U+DCFF: surrogateescape) as
    `\\xNN`; any other lone surrogate as the replacement character."""
    code = ord(found.group())
    return f"\\x{code - 0xDC00:02x}" if 0xDC80 <= code <= 0xDCFF else REPLACEMENT


def valid(value: str) -> str:
    """`value` as text every encoder takes: lone surrogates made visible, NUL removed."""
    if value.isascii():
        return value.replace("\x00", "") if "\x00" in value else value
    return _SURROGATE.sub(_shown_surrogate, value).replace("\x00", "")


def received(value: str | bytes, limit: int | None, inline: bool = False) -> str:
    """Text from a submission as the judge takes it: bytes read as UTF-8 (a byte that is not
    shows as `\\xNN`), made `valid`, and cut to `limit` characters (None: no cap) with a note
    of how many more there were, on a line of its own unless `inline`. Inline text (a name, a
    word, a note on a row) stays on its one line and shows every character that would not
    show (see `one_line`): otherwise it could pass for another row, or forge one."""
    if isinstance(value, bytes | bytearray):
        value = bytes(value).decode("utf-8", "surrogateescape")
    elif not isinstance(value, str):
        raise TypeError(f"text expected, not {type(value).__name__}")
    if inline:
        value = one_line(value)
    dropped = 0
    if limit is not None and len(value) > limit:
        dropped = len(value) - limit
        value = value[:limit]
    value = valid(value)
    if dropped:
        separator = " " if inline else "\n"
        value += f"{separator}... ({dropped} more characters not shown)"
    return value


_LINE_BREAKS = str.maketrans({"\n": "\\n", "\r": "\\r", "\t": "\\t"})
_HIDDEN_LETTERS = frozenset("\u115f\u1160\u3164\uffa0\u034f\u2800")
"""Letters and marks that print as nothing (Hangul fillers, the grapheme joiner, a blank
braille cell): category alone does not tell them."""


def _shown(char: str) -> str:
    """A character as inline text shows it: itself, or `\\uXXXX` where it would not show."""
    code = ord(char)
    if char in _HIDDEN_LETTERS or unicodedata.category(char) in ("Cc", "Cf", "Zl", "Zp") \
            or (unicodedata.category(char) == "Zs" and char != " ") \
            or 0xFE00 <= code <= 0xFE0F or 0xE0100 <= code <= 0xE01EF:
        return f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}"
    return char


def one_line(value: str) -> str:
    """`value` on one line with nothing hidden: a newline, carriage return or tab as `\\n`,
    `\\r`, `\\t`; every other control, format character (zero-width spaces and joiners,
    bidirectional marks), line or paragraph separator, space other than the plain one, and
    invisible letter as `\\uXXXX`; in a word that mixes Latin, Greek and Cyrillic letters (a
    Cyrillic `о` in `bоb`), the letters of the word's lesser scripts as `\\uXXXX` too; and
    beside Latin letters, a Greek or Cyrillic word made only of letters that pass for Latin
    ones (a Cyrillic `ехес`) as `\\uXXXX` throughout. Two names that differ show
    differently."""
    value = value.translate(_LINE_BREAKS)
    if value.isascii() and value.isprintable():
        return value
    shown = "".join(map(_shown, value))
    latin = any(_script(c) == "LATIN" for c in shown)
    return _WORD.sub(partial(_unmixed, latin), shown)


_LOOKALIKE_SCRIPTS = ("LATIN", "GREEK", "CYRILLIC")
"""Scripts whose letters pass for each other's."""
_WORD = re.compile(r"[^\W\d_]+")


def _script(char: str) -> str | None:
    name = unicodedata.name(char, "")
    return next((s for s in _LOOKALIKE_SCRIPTS if name.startswith(s + " ")), None)


_PASS_FOR_LATIN = frozenset(
    "аеорсухѕіјԁһӏԛԝүѵАВЕКМНОРСТХЅІЈУҮѴԚԜ"  # Cyrillic
    "οναικρτυχΑΒΕΖΗΙΚΜΝΟΡΤΥΧ")  # Greek
"""Greek and Cyrillic letters that look like Latin ones."""


def _unmixed(latin: bool, word: re.Match[str]) -> str:
    """A word in one script as it is (but one whose every letter passes for a Latin one, in
    a text with Latin letters: all `\\uXXXX`); one mixing lookalike scripts with the letters
    of all but its most used one shown as `\\uXXXX`."""
    scripts = [_script(c) for c in word.group()]
    used = {s for s in scripts if s is not None}
    if latin and used and used != {"LATIN"} and set(word.group()) <= _PASS_FOR_LATIN:
        return "".join(f"\\u{ord(c):04x}" for c in word.group())
    if len(used) < 2:
        return word.group()
    main = max(sorted(used), key=scripts.count)
    return "".join(c if s in (main, None) else f"\\u{ord(c):04x}"
                   for c, s in zip(word.group(), scripts, strict=True))


def received_name(name: str | bytes | os.PathLike[Any]) -> str:
    """A file or folder name, or a path, as a row shows it: bytes that are not UTF-8 as
    `\\xNN`, on one line with nothing hidden (`one_line`), cut at NAME_LIMIT."""
    return received(os.fsdecode(name), NAME_LIMIT, inline=True)


def valid_tree(value: Any) -> Any:
    """A JSON-like document (dicts, lists, str, numbers) with every string, keys included,
    made `valid`: what a writer dumps, whatever a row holds."""
    if isinstance(value, str):
        return valid(value)
    if isinstance(value, dict):
        return {valid_tree(k): valid_tree(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [valid_tree(v) for v in value]
    return value


def clean(value: str) -> str:
    """`value` made `valid`, without terminal control sequences, control characters (newline
    and tab stay) or bidirectional controls."""
    return _UNSAFE.sub("", valid(value))


def text(value: str, style: str = "") -> Text:
    """`value` cleaned, as rich text that is shown as written (never read as markup)."""
    from rich.text import Text

    return Text(clean(value), style=style)


def csv_cell(value: str) -> str:
    """A text cell of a CSV file, cleaned, with a leading apostrophe where a spreadsheet
    would otherwise run it as a formula (spaces before the sign, or its full-width form, do
    not hide it). Only text goes through here: the score columns are
    numbers the grader formats itself (never negative) and stay numbers."""
    value = clean(value)
    first = value.lstrip(" \u00a0\u3000")[:1]
    return f"'{value}" if first and unicodedata.normalize("NFKC", first).startswith(
        FORMULA_STARTS) else value
