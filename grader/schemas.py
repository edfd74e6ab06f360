"""The JSON Schemas of the documents grader writes, generated from the types that describe them
(results.RunDoc, batch.BatchDoc, mock.MockEndDoc), so that the schema and the code cannot
drift apart: docs/schemas/ holds the generated files, and the tests check that they are what
this module makes and that real documents validate against them.

    python -m grader.schemas      # rewrite docs/schemas/ after a document type changed

A TypedDict becomes an object with exactly its keys (the required ones required); str, int,
float, bool, None, Literal, lists, dicts with string keys and unions map to their JSON
Schema counterparts; Any allows anything."""

from __future__ import annotations

import json
import sys
import types
from pathlib import Path
from typing import Any, Literal, Union, get_args, get_origin, get_type_hints, is_typeddict

from grader.candidate.mock import MockEndDoc
from grader.coach.batch import BatchDoc
from grader.engine.results import SCHEMA_VERSION, RunDoc

DRAFT = "https://json-schema.org/draft/2020-12/schema"
DOCUMENTS: dict[str, tuple[Any, str]] = {
    "check": (RunDoc, "grader check --json"),
    "grade": (BatchDoc, "grader grade --json (what grader report reads)"),
    "mock-end": (MockEndDoc, "grader mock end --json"),
}
"""Each document's file stem, its type and the command that writes it."""
SCHEMA_DIR = Path(__file__).resolve().parent.parent / "docs" / "schemas"


def schema_of(hint: Any, definitions: dict[str, Any]) -> dict[str, Any]:
    """The JSON Schema of one type; TypedDicts go into `definitions` once, by name."""
    origin, args = get_origin(hint), get_args(hint)
    if hint is Any:
        return {}
    if is_typeddict(hint):
        name = hint.__name__.lstrip("_")
        if name not in definitions:
            definitions[name] = {}  # a placeholder, should a type ever refer to itself
            definitions[name] = _object(hint, definitions)
        return {"$ref": f"#/$defs/{name}"}
    if origin is Literal:
        return {"enum": list(args)}
    if origin is list:
        return {"type": "array", "items": schema_of(args[0], definitions)}
    if origin is dict:
        if args[0] is not str:
            raise TypeError(f"JSON objects have string keys, not {args[0]}")
        return {"type": "object", "additionalProperties": schema_of(args[1], definitions)}
    if origin in (Union, types.UnionType):
        return {"anyOf": [schema_of(a, definitions) for a in args]}
    simple = {str: "string", bool: "boolean", int: "integer", float: "number",
              type(None): "null"}
    if hint in simple:
        return {"type": simple[hint]}
    raise TypeError(f"no JSON Schema for {hint!r}")


def _object(typed: Any, definitions: dict[str, Any]) -> dict[str, Any]:
    hints = get_type_hints(typed)
    described = {"description": " ".join(typed.__doc__.split())} if typed.__doc__ else {}
    return {**described, "type": "object",
            "properties": {key: schema_of(hint, definitions) for key, hint in hints.items()},
            "required": sorted(typed.__required_keys__), "additionalProperties": False}


def document_schema(stem: str) -> dict[str, Any]:
    """The whole schema of one document: its type's, with every TypedDict it uses defined."""
    typed, command = DOCUMENTS[stem]
    definitions: dict[str, Any] = {}
    root = schema_of(typed, definitions)
    name = root["$ref"].rsplit("/", 1)[1]
    top = definitions.pop(name)
    top["properties"]["schema_version"] = {"const": SCHEMA_VERSION}
    return {"$schema": DRAFT, "$id": f"{stem}.schema.json", "title": command, **top,
            "$defs": dict(sorted(definitions.items()))}


def rendered(stem: str) -> str:
    return json.dumps(document_schema(stem), indent=2) + "\n"


def main() -> int:
    SCHEMA_DIR.mkdir(parents=True, exist_ok=True)
    for stem in DOCUMENTS:
        (SCHEMA_DIR / f"{stem}.schema.json").write_text(rendered(stem), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
