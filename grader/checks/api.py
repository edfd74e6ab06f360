"""What a probe sees inside the child: the candidate's functions, a backend, safe calls.

`Api.call` runs one candidate function and reports its outcome as plain data: the value, or
the exception with the candidate's own line. NotImplementedError is let through on purpose: the
runner turns it into "not implemented yet" for the whole check.
"""

from __future__ import annotations

import traceback
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

from grader.checks.backends import Backend, CandidateFault


@dataclass(frozen=True)
class Raised:
    """An exception from candidate code, reduced to what a verdict needs."""

    type: str
    message: str
    where: str
    bases: tuple[str, ...] = ()

    def as_dict(self) -> dict[str, Any]:
        return {"type": self.type, "message": self.message, "where": self.where,
                "bases": list(self.bases)}


def describe_exception(exc: BaseException, folder: Path) -> Raised:
    """Name the exception and the deepest frame that lies in the candidate's folder."""
    where = ""
    for frame in traceback.extract_tb(exc.__traceback__):
        path = Path(frame.filename)
        if path.is_relative_to(folder):
            line = (frame.line or "").strip()
            where = f"{path.relative_to(folder.parent)}, line {frame.lineno}: {line}"
    message = str(exc).strip()
    if len(message) > 600:
        message = message[:600] + " ..."
    bases = tuple(cls.__name__ for cls in type(exc).__mro__)
    return Raised(type(exc).__name__, message, where, bases)


class Api:
    """The candidate's module for one part, as a probe may use it."""

    def __init__(self, module: ModuleType, backend: Backend, folder: Path) -> None:
        self.module = module
        self.backend = backend
        self.folder = folder

    @property
    def flavor(self) -> str:
        return self.backend.name

    def function(self, name: str) -> Callable[..., Any]:
        fn = getattr(self.module, name, None)
        if not callable(fn):
            raise CandidateFault(
                f"{self.module.__name__.replace('.', '/')}.py defines no function {name}()"
            )
        return fn

    def call(self, fn: Callable[..., Any], *args: Any) -> tuple[Any, Raised | None]:
        """(return value, None) or (None, the exception it raised)."""
        try:
            return fn(*args), None
        except NotImplementedError:
            raise
        except Exception as exc:  # noqa: BLE001 - candidate code may raise anything
            return None, describe_exception(exc, self.folder)
