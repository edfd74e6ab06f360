"""Text that says a different thing in each flavor: `{{numpy: np.empty_like(W) | torch: ...}}`.

A round's hints are written once for every flavor of a check, but the API they name is not the
same: a torch candidate told to call `np.empty_like` is sent the wrong way. So a hint (a check's
or a known mistake's, or one of a part's hints) may hold alternatives in double braces, one per
flavor, separated by `|`; what a candidate reads is the alternative of the flavor they are
graded in (resolved by the worker, and by `grader hint`). Tables are checked when they load
(`problems`): every alternative names a flavor of the round and every flavor the text can be
shown in has one.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

CHOICE = re.compile(r"\{\{(.*?)\}\}", re.S)
"""One set of alternatives: `{{flavor: text | flavor: text}}`."""


def _alternatives(body: str) -> dict[str, str] | None:
    """The alternatives of one `{{...}}` by flavor, or None when one is not `flavor: text`."""
    found: dict[str, str] = {}
    for piece in body.split("|"):
        flavor, colon, text = piece.partition(":")
        if not colon or not flavor.strip().isidentifier() or flavor.strip() in found:
            return None
        found[flavor.strip()] = text.strip()
    return found


def for_flavor(text: str, flavor: str) -> str:
    """`text` as a candidate in `flavor` reads it (text without alternatives is unchanged)."""
    if "{{" not in text:
        return text

    def choose(match: re.Match[str]) -> str:
        alternatives = _alternatives(match.group(1)) or {}
        return alternatives.get(flavor, match.group(0))

    return CHOICE.sub(choose, text)


def problems(text: str, shown_in: Iterable[str], allowed: Iterable[str]) -> list[str]:
    """What is wrong with the alternatives in `text`, shown in each flavor of `shown_in`: a set
    that is not `flavor: text | ...`, that lacks one of those flavors, or that names a flavor
    not `allowed` (the round's)."""
    needed, known = set(shown_in), set(allowed)
    found = []
    for match in CHOICE.finditer(text):
        alternatives = _alternatives(match.group(1))
        if alternatives is None:
            found.append(f"{match.group(0)!r} is not {{{{flavor: text | flavor: text}}}}")
        elif not needed <= set(alternatives) <= known:
            found.append(f"{match.group(0)!r} must give each of {', '.join(sorted(needed))} "
                         f"and no flavor but {', '.join(sorted(known))}")
    rest = CHOICE.sub("", text)
    if "{{" in rest or "}}" in rest:
        found.append(f"an unmatched double brace in {text!r}")
    return found
