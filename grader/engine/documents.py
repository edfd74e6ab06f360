"""TOML and JSON documents that a person or a submission wrote, parsed with every way the text
can fail to be one turned into a single exception with a message.

Python's parsers recurse: a short file nested thousands deep (`a = [[[[...`, `{"a":[[[...`)
raises RecursionError, not their decode error, and an integer of more than 4300 digits a plain
ValueError; a caller that catches only the decode error dies with a traceback, taking a whole
class's grading with it where one submission's grader.toml is read. Every reader of such text
goes through here and catches Unreadable alone.
"""

from __future__ import annotations

import json
import tomllib
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

Document = TypeVar("Document")


class Unreadable(ValueError):
    """The text is not a document of its kind; the message says why, in words."""


TOO_DEEP = "nested too deep to read"


def toml_document(text: str) -> dict[str, Any]:
    try:
        return tomllib.loads(text)
    except (RecursionError, MemoryError):
        raise Unreadable(f"not valid TOML: {TOO_DEEP}") from None
    except ValueError as exc:  # its decode error, and an integer past Python's digit limit
        raise Unreadable(f"not valid TOML: {exc}") from None


def json_document(text: str | bytes) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise Unreadable(f"not JSON ({exc.msg} at line {exc.lineno}, column {exc.colno})") \
            from None
    except UnicodeDecodeError:
        raise Unreadable("not JSON: not UTF-8 text") from None
    except (RecursionError, MemoryError):
        raise Unreadable(f"not JSON: {TOO_DEEP}") from None
    except ValueError as exc:  # an integer past Python's digit limit
        raise Unreadable(f"not JSON: {exc}") from None


def read_document(path: Path, parse: Callable[[str], Document],
                  limit: int | None = None) -> Document:
    """The document in the file at `path` (its first `limit` bytes and one more, where given,
    so a parser never sees more than a caller's cap allows), or Unreadable saying why not:
    it cannot be read, is not UTF-8 text, or is not a document."""
    try:
        with open(path, "rb") as handle:
            data = handle.read(-1 if limit is None else limit + 1)
    except OSError as exc:
        raise Unreadable(f"cannot read it ({exc.strerror})") from None
    try:
        text = data.decode()
    except UnicodeDecodeError:
        raise Unreadable("not UTF-8 text") from None
    return parse(text)
