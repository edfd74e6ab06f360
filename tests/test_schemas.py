"""The JSON Schemas in docs/schemas/ are what grader.schemas generates from the document types,
and they are strict: a document that drifts from its type fails them. (The commands' real
documents are validated where the tests make them: test_cli, test_grade, test_cli_mock.)"""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from grader import schemas
from grader.engine.results import SCHEMA_VERSION, CheckResult, PartResult, RunResult

from helpers import SCHEMAS, validate_document


@pytest.mark.parametrize("stem", list(schemas.DOCUMENTS))
def test_each_schema_file_is_the_generated_one(stem: str) -> None:
    """After a document type changes, `python -m grader.schemas` rewrites the files."""
    assert (SCHEMAS / f"{stem}.schema.json").read_text() == schemas.rendered(stem)


@pytest.mark.parametrize("stem", list(schemas.DOCUMENTS))
def test_each_schema_is_a_valid_json_schema(stem: str) -> None:
    Draft202012Validator.check_schema(json.loads((SCHEMAS / f"{stem}.schema.json").read_text()))


def run_document() -> dict[str, Any]:
    check = CheckResult(id="part1.values", title="Values", status="failed", score=0.5,
                        max_score=1.0, message="off by one", hint="look again")
    return json.loads(json.dumps(RunResult("prefix-products", "torch", 3,
                                           [PartResult("part1", "Part 1", [check])]).to_dict()))


def test_a_check_document_carries_its_schema_version_and_validates() -> None:
    doc = run_document()
    assert doc["schema_version"] == SCHEMA_VERSION
    validate_document(doc, "check")


@pytest.mark.parametrize(("change", "says"), [
    (lambda d: d.pop("seed"), "'seed' is a required property"),
    (lambda d: d.update(extra=1), "Additional properties are not allowed"),
    (lambda d: d["parts"][0]["checks"][0].update(status="maybe"), "'maybe' is not one of"),
    (lambda d: d["parts"][0]["checks"][0].update(hint=3), "3 is not valid under any"),
    (lambda d: d.update(schema_version=2), "1 was expected"),
    (lambda d: d.update(seed=1.5), "1.5 is not of type 'integer'"),
])
def test_a_document_that_drifts_from_its_type_fails_the_schema(change: Any, says: str) -> None:
    doc = copy.deepcopy(run_document())
    change(doc)
    with pytest.raises(AssertionError, match=says):
        validate_document(doc, "check")


def test_unions_literals_and_optional_keys_map_to_their_json_schema() -> None:
    definitions: dict[str, Any] = {}
    assert schemas.schema_of(str | None, definitions) == {
        "anyOf": [{"type": "string"}, {"type": "null"}]}
    grade = schemas.document_schema("grade")
    assert "secret" in grade["properties"] and "secret" not in grade["required"]
    assert grade["$defs"]["SubmissionDoc"]["properties"]["status"] == {
        "enum": ["graded", "mismatch", "broken", "error"]}
    with pytest.raises(TypeError, match="no JSON Schema"):
        schemas.schema_of(set[int], definitions)
