"""What a probe sees inside the child: the candidate's module, a backend, the round's helpers,
and safe calls.

`Api.call` runs one candidate function and reports its outcome as plain data: the value, or
the exception with the candidate's own line. NotImplementedError is let through on purpose: the
runner turns it into "not implemented yet" for the whole check.
"""

from __future__ import annotations

import linecache
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any, TypedDict, cast

from grader.probes.backends import Backend, CandidateFault


class RaisedDict(TypedDict):
    """An exception from candidate code as it crosses to the judge."""

    type: str
    message: str
    where: str
    bases: list[str]


@dataclass(frozen=True)
class Raised:
    """An exception from candidate code, reduced to what a verdict needs."""

    type: str
    message: str
    where: str
    bases: tuple[str, ...] = ()

    def as_dict(self) -> RaisedDict:
        return {"type": self.type, "message": self.message, "where": self.where,
                "bases": list(self.bases)}


def as_dict(raised: Raised | None) -> RaisedDict | None:
    return raised.as_dict() if raised is not None else None


MESSAGE_LIMIT = 600


def describe_exception(exc: BaseException, folder: Path) -> Raised:
    """Name the exception and the deepest frame that lies in the candidate's folder (whose
    line alone is read: validation checks raise hundreds of times a part, often from deep in
    torch)."""
    where = ""
    deepest: tuple[Path, int] | None = None
    trace = exc.__traceback__
    while trace is not None:
        path = Path(trace.tb_frame.f_code.co_filename)
        if path.is_relative_to(folder):
            deepest = path, trace.tb_lineno
        trace = trace.tb_next
    if deepest is not None:
        path, number = deepest
        linecache.checkcache(str(path))  # a file saved since this process last read it
        line = linecache.getline(str(path), number).strip()
        where = f"{path.relative_to(folder.parent)}, line {number}: {line}"
    message = str(exc).strip()
    if len(message) > MESSAGE_LIMIT:
        message = message[:MESSAGE_LIMIT] + " ..."
    bases = tuple(cls.__name__ for cls in type(exc).__mro__)
    return Raised(type(exc).__name__, message, where, bases)


class Api:
    """The candidate's module for one part, as a probe may use it.

    `helpers` is the round's probes module: the argument builders and readers a check's
    configuration names.
    """

    def __init__(self, module: ModuleType, backend: Backend, folder: Path,
                 helpers: ModuleType | None = None,
                 load_part: Callable[[str], ModuleType] | None = None) -> None:
        self.module = module
        self.backend = backend
        self.folder = folder
        self.helpers = helpers
        self._load_part = load_part

    @property
    def flavor(self) -> str:
        return self.backend.name

    def function(self, name: str) -> Callable[..., Any]:
        fn = getattr(self.module, name, None)
        if not callable(fn):
            raise CandidateFault(
                f"{self.module.__name__.replace('.', '/')}.py defines no function {name}()"
            )
        return cast(Callable[..., Any], fn)

    def helper(self, name: str) -> Callable[..., Any]:
        """A function of the round's probes module (a grader bug when it is missing)."""
        fn = getattr(self.helpers, name, None)
        if not callable(fn):
            raise LookupError(f"the round's probes module defines no {name}()")
        return cast(Callable[..., Any], fn)

    def other_part(self, module: str) -> ModuleType:
        """Import another exercise file of the workspace (e.g. a probe timing the candidate's
        earlier part); an ImportError when this child cannot."""
        if self._load_part is None:
            raise ImportError(f"cannot import exercises.{module} here")
        return self._load_part(module)

    def call(self, fn: Callable[..., Any], *args: Any) -> tuple[Any, Raised | None]:
        """(return value, None) or (None, the exception it raised)."""
        try:
            return fn(*args), None
        except NotImplementedError:
            raise
        except Exception as exc:  # noqa: BLE001 - candidate code may raise anything
            return None, describe_exception(exc, self.folder)
