"""Whether plain data (decoded JSON, a request) has the shape of the type that describes it,
and where it does not: the check every document and message gets where it is received, with
the types themselves as the only schema."""

from __future__ import annotations

import dataclasses
import json
import types
from typing import Any, Literal, Union, get_args, get_origin, get_type_hints, is_typeddict


def shape_problem(value: Any, expected: Any, where: str = "",
                  whole: str = "the document") -> str | None:
    """Where `value` departs from the type `expected` (a TypedDict, a dataclass's fields, a
    list, a dict, a union, a Literal, str, int, float, bool, None or Any), or None when it
    fits. A TypedDict's object may carry keys it does not name (a document of a later version
    adds fields); a dataclass's may not (a message names exactly its fields)."""
    here = where or whole
    origin, args = get_origin(expected), get_args(expected)
    if expected is Any:
        return None
    if dataclasses.is_dataclass(expected) and isinstance(expected, type):
        return _fields_problem(value, expected, where, here)
    if is_typeddict(expected):
        if not isinstance(value, dict):
            return f"{here} should be an object, not {brief(value)}"
        missing = sorted(expected.__required_keys__ - value.keys())
        if missing:
            return f"{here} has no {missing[0]!r}"
        for key, hint in get_type_hints(expected).items():
            problem = shape_problem(value[key], hint, f"{where}.{key}".lstrip(".")) \
                if key in value else None
            if problem:
                return problem
        return None
    if origin is dict:
        if not isinstance(value, dict):
            return f"{here} should be an object, not {brief(value)}"
        for key, item in value.items():
            if problem := shape_problem(item, args[1], f"{where}.{key}".lstrip(".")):
                return problem
        return None
    if origin is list:
        if not isinstance(value, list):
            return f"{here} should be a list, not {brief(value)}"
        for i, item in enumerate(value):
            if problem := shape_problem(item, args[0], f"{where}[{i}]"):
                return problem
        return None
    if origin in (Union, types.UnionType):
        if any(shape_problem(value, option, where) is None for option in args):
            return None
        return f"{here} should be {' or '.join(map(_kind, args))}, not {brief(value)}"
    if origin is Literal:
        return None if value in args else \
            f"{here} should be one of {', '.join(args)}, not {brief(value)}"
    if expected in (int, float):
        fits = isinstance(value, int | float) and not isinstance(value, bool) and (
            expected is float or isinstance(value, int))
    else:
        fits = isinstance(value, origin or expected)
    return None if fits else f"{here} should be {_kind(expected)}, not {brief(value)}"


def _kind(expected: Any) -> str:
    """A JSON type's name, as the message to a coach says it."""
    kinds = {str: "a string", int: "an integer", float: "a number", type(None): "null",
             list: "a list", dict: "an object", bool: "true or false"}
    return "an object" if is_typeddict(expected) else \
        kinds.get(get_origin(expected) or expected, str(expected))


def brief(value: Any) -> str:
    """The value as JSON, cut to 40 characters, for a message that says what was found."""
    text = json.dumps(value, default=repr)
    return text if len(text) <= 40 else text[:37] + "..."




def _fields_problem(value: Any, expected: type, where: str, here: str) -> str | None:
    if not isinstance(value, dict):
        return f"{here} should be an object, not {brief(value)}"
    fields = {f.name: f for f in dataclasses.fields(expected)}
    unknown = sorted(set(value) - set(fields))
    if unknown:
        return f"{here} has an unknown field {unknown[0]!r}"
    needed = sorted(name for name, f in fields.items() if name not in value
                    and f.default is dataclasses.MISSING
                    and f.default_factory is dataclasses.MISSING)
    if needed:
        return f"{here} has no {needed[0]!r}"
    hints = get_type_hints(expected)
    for key in value:
        if problem := shape_problem(value[key], hints[key], f"{where}.{key}".lstrip(".")):
            return problem
    return None
