"""`grader explain`: every topic's demonstrations run on this torch, they show what the text
claims, and every topic that a hint, an error diagnosis or a follow-up names exists."""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

import pytest

from grader.explain import TOPIC_NAMES, TOPICS, Topic, get_topic, run_demos
from grader.followups import FOLLOWUPS


@pytest.mark.parametrize("topic", TOPICS, ids=TOPIC_NAMES)
def test_every_demonstration_runs_without_an_unexpected_error(topic: Topic) -> None:
    import torch

    namespace: dict[str, object] = {"torch": torch}
    for code in topic.demos:  # run directly: an exception here fails the test
        with contextlib.redirect_stdout(io.StringIO()):
            exec(compile(code, topic.name, "exec"), namespace)


@pytest.mark.parametrize(("name", "shown"), [
    ("version-counter", "is at version 4; expected version 3"),
    ("leaf-inplace", "a view of a leaf Variable that requires grad"),
    ("mark-dirty", "gradcheck: True"),
    ("detached-graph", "does not require grad and does not have a grad_fn"),
    ("gradcheck", "GradcheckError: Jacobian mismatch for output 0 with respect to input 0"),
    ("hillis-steele", "step 4: W0..W0  W0..W1  W0..W2  W0..W3  W0..W4  W0..W5"),
    ("work-depth", "N=8: scan 17 matmuls in 3 levels; loop 7 matmuls in 7 steps"),
    ("associativity", "A @ B == B @ A: False"),
])
def test_demonstrations_show_what_the_text_claims(name: str, shown: str) -> None:
    printed = "".join(output for _, output in run_demos(get_topic(name)))
    assert shown in printed


def test_every_referenced_topic_exists() -> None:
    source = Path(__file__).resolve().parents[1] / "grader"
    named = set()
    for path in source.rglob("*.py"):
        named |= set(re.findall(r"grader explain ([a-z][a-z-]+[a-z])", path.read_text()))
    named |= {t for f in FOLLOWUPS.values() for t in f.topics}
    assert named and named <= set(TOPIC_NAMES)


def test_unknown_topic_names_the_known_ones() -> None:
    with pytest.raises(KeyError, match="version-counter"):
        get_topic("nope")
