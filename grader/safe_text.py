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
"""

from __future__ import annotations

import re

from rich.text import Text

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


def clean(value: str) -> str:
    """`value` without terminal control sequences, control characters (newline and tab
    stay) or bidirectional controls."""
    return _UNSAFE.sub("", value)


def text(value: str, style: str = "") -> Text:
    """`value` cleaned, as rich text that is shown as written (never read as markup)."""
    return Text(clean(value), style=style)


def csv_cell(value: str) -> str:
    """A text cell of a CSV file, cleaned, with a leading apostrophe where a spreadsheet
    would otherwise run it as a formula. Only text goes through here: the score columns are
    numbers the grader formats itself (never negative) and stay numbers."""
    value = clean(value)
    return f"'{value}" if value.startswith(FORMULA_STARTS) else value
