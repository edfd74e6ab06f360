"""EXPLANATION is graded on sentences: an idea counts only when a sentence states it. The table
of real-style answers in tests/explanations/ pins how many ideas each must be credited with
(good answers, paraphrases, partial ones, keyword lists, wrong ones)."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path
from typing import Any

import pytest

from grader.checks.base import Context
from grader.checks.kinds import is_statement, sentences
from grader.checks.table import round_checks
from grader.engine.rounds import get_round

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
    found = re.match(r"states (?:all (\d+)|\d+ of (\d+)) key ideas", verdict.message)
    assert found, verdict.message
    total = int(found[1] or found[2])
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


def test_a_sentence_that_denies_an_idea_loses_it_and_says_so() -> None:
    """Every key word, a false story: the claims are what count."""
    verdict = judge("autograd-pitfalls", "part1",
                    "I do not think the gradients accumulate across steps. The loss oscillates "
                    "because the learning rate is too large. zero_grad is not needed here.")
    assert verdict.status == "failed"
    assert verdict.message == (
        "states 1 of 3 key ideas; it says the opposite of: backward() adds each new gradient "
        "into .grad; it does not overwrite it; the fix clears the gradients every step before "
        "backward: optimizer.zero_grad(), or p.grad = None")
    assert verdict.fraction == pytest.approx(1 / 3)


def test_negative_facts_and_warnings_are_claims_too_not_denials() -> None:
    """"could not reach the adapter" states the symptom; "do not go through .data" states the
    warning; "does not overwrite" beside the claim that .grad adds up denies nothing."""
    assert judge("autograd-pitfalls", "part5",
                 "The adapter's output was detached, which cuts the graph there: gradients could "
                 "not reach the adapter, so only the head learned. Freezing the encoder is "
                 "requires_grad_(False) on its parameters.").status == "passed"
    assert judge("autograd-pitfalls", "part2",
                 "The parameters are leaf tensors that require grad, so autograd refuses the "
                 "in-place write. Recording the update would add it to the graph. The fix is "
                 "to wrap the update in torch.no_grad(). Do not go through .data: it silences "
                 "the error but hides the write from the version counter.").status == "passed"
    assert judge("autograd-pitfalls", "part1",
                 "backward() adds each new gradient into .grad; it does not overwrite it. "
                 "Without zeroing, every step uses the sum of the earlier gradients, so the "
                 "loss oscillates. The fix is optimizer.zero_grad() every step.").status == "passed"


@pytest.mark.parametrize(("round_id", "part_id", "text", "why"), [
    ("autograd-pitfalls", "part2",
     "The parameters are leaf tensors that require grad, so autograd refuses the in-place "
     "write. Recording it would put the update in the graph. The fix is to update p.data "
     "directly, which the version counter does not see.", "Updating through .data is no fix"),
    ("prefix-products", "part1",
     "Autograd saves the inputs of each matmul for backward. Writing into P in place modifies "
     "those saved tensors and bumps the version counter. The fix is to call detach() on P "
     "before writing.", "detach() is no fix"),
    ("autograd-pitfalls", "part1",
     "backward() adds each new gradient into .grad. So the loss oscillates since old gradients "
     "pile up. The fix is to call optimizer.zero_grad() once before the loop.",
     "Zeroing once, before the loop, is not enough"),
])
def test_a_misconception_fails_the_explanation_and_is_named(round_id: str, part_id: str,
                                                            text: str, why: str) -> None:
    verdict = judge(round_id, part_id, text)
    assert verdict.status == "failed"
    assert f"; it says something that is not so: {why}" in verdict.message
