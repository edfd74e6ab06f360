"""EXPLANATION is graded on sentences: an idea counts only when a sentence states it. The table
of real-style answers in tests/explanations/ pins how many ideas each must be credited with
(good answers, paraphrases, partial ones, keyword lists, wrong ones)."""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

import pytest

from grader.checks.base import Context
from grader.checks.kinds import is_statement, sentences
from grader.checks.table import round_checks
from grader.rounds import get_round

TABLES = Path(__file__).resolve().parent / "explanations"


def answers() -> list[Any]:
    found = []
    for table in sorted(TABLES.glob("*.toml")):
        round_id, part_id = table.stem.split(".")
        for index, answer in enumerate(tomllib.loads(table.read_text())["answer"]):
            found.append(pytest.param(round_id, part_id, answer,
                                      id=f"{table.stem}[{index}] {answer['about']}"))
    return found


def judge(round_id: str, part_id: str, text: str) -> Any:
    (check,) = [c for c in round_checks(get_round(round_id))
                if c.part_id == part_id and c.id.endswith(".explanation")]
    return check.plan(Context(1, "torch", check.id)).judge({"type": "str", "text": text})


def test_the_table_is_large_enough() -> None:
    assert len(answers()) >= 20


@pytest.mark.parametrize(("round_id", "part_id", "answer"), answers())
def test_each_answer_gets_the_credit_it_deserves(round_id: str, part_id: str,
                                                 answer: dict[str, Any]) -> None:
    verdict = judge(round_id, part_id, answer["text"])
    total = 4
    if answer["covers"] == total:
        assert verdict.status == "passed", verdict
    else:
        assert verdict.status == "failed", verdict
        assert verdict.message.startswith(f"states {answer['covers']} of {total} key ideas"), \
            verdict.message
        assert verdict.fraction == pytest.approx(answer["covers"] / total)


def test_a_keyword_list_is_told_to_write_sentences() -> None:
    verdict = judge("prefix-products", "part1", "version saved overwritten stack")
    assert "reads as a list of words" in verdict.message
    assert verdict.hint and verdict.hint.startswith("Not yet said: ")


def test_sentences_and_statements() -> None:
    assert sentences("One. Two!\n\n- three\n- four\n1. five") == \
        ["One.", "Two!", "- three", "four", "five"]
    assert is_statement("The saved tensor is modified in place.")
    assert not is_statement("version counter saved tensors")
