"""`grader explain`: every topic of every round parses, its demonstrations run on this torch
and show what the text claims, and every topic a hint, a follow-up or an error names exists."""

from __future__ import annotations

import re

import pytest

from grader.candidate.explain import run_demos
from grader.checks.followups import followup_for
from grader.checks.kinds import explain_error
from grader.engine.prose import error_topic, parse, topics
from grader.engine.rounds import RoundError, installed

from helpers import PREFIX

TOPICS = [pytest.param(r, name, id=f"{r.id}/{name}") for r in installed().values()
          for name in topics(r)]


@pytest.mark.parametrize(("round_", "name"), TOPICS)
def test_every_demonstration_runs_without_an_unexpected_error(round_, name: str) -> None:
    topic = topics(round_)[name]
    assert topic.meta.get("summary"), f"{name} has no summary"
    assert topic.has("explanation"), f"{name} has no ## explanation"
    for block, printed in run_demos(topic):
        assert "Error" not in printed or "raise" in block.text or "except" in block.text, printed


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
    printed = "".join(output for _, output in run_demos(topics(PREFIX)[name]))
    assert shown in printed


def test_every_referenced_topic_exists() -> None:
    """`grader explain NAME` in any round file, and every follow-up's topics, name a topic of
    that round."""
    for round_ in installed().values():
        names = set(topics(round_))
        named = set()
        for path in round_.folder.rglob("*"):
            if path.suffix in (".py", ".toml", ".md"):
                named |= set(re.findall(r"grader explain ([a-z][a-z-]+[a-z])", path.read_text()))
        for part in round_.parts:
            for flavor in part.flavors:
                followup = followup_for(round_, part.id, flavor)
                named |= set(followup.topics if followup else ())
        assert named <= names, (round_.id, named - names)


def test_known_errors_are_matched_to_their_topic() -> None:
    message = ("one of the variables needed for gradient computation has been modified by an "
               "inplace operation: [torch.DoubleTensor [3, 3]] is at version 7; expected 6")
    topic = error_topic(PREFIX, message)
    assert topic is not None and topic.name == "version-counter"
    assert "torch.stack" in topic.text("fix")
    assert error_topic(PREFIX, "something else entirely") is None


def test_a_malformed_topic_names_its_file() -> None:
    with pytest.raises(RoundError, match="x.md: front matter is not closed"):
        parse("---\nsummary: s\n", "x.md")
    with pytest.raises(RoundError, match="x.md: text before the first ## section"):
        parse("hello\n## explanation\nhi\n", "x.md")
    with pytest.raises(RoundError, match="x.md: a code block is not closed"):
        parse("## explanation\n```python\nprint(1)\n", "x.md")


def test_prose_paragraphs_and_code() -> None:
    doc = parse("---\nsummary: s\ntopics: a, b\n---\n## answer\nline one\nline two\n\n"
                "    kept = 1\n    as is\n\n## other\nx {y}\n```python\nprint(2)\n```\n", "d.md")
    assert doc.text("answer") == "line one line two\n\nkept = 1\nas is"
    assert doc.listed("topics") == ("a", "b")
    assert [b.code for b in doc.sections["other"]] == [False, True]


@pytest.mark.parametrize(("round_", "name"), TOPICS)
def test_no_topic_tells_its_reader_to_run_the_command_they_ran(round_, name: str) -> None:
    """Issue 24: `grader explain version-counter` said to run `grader explain version-counter`.
    The pointer belongs to the error message that quotes the topic's fix (explain_error)."""
    text = (round_.folder / "topics" / f"{name}.md").read_text()
    assert not re.search(rf"grader\s+explain\s+{name}\b", text), name


def test_an_error_message_quoting_a_topic_points_to_it_once() -> None:
    message = "a leaf Variable that requires grad is being used in an in-place operation."
    what, fix = explain_error(PREFIX, message)  # type: ignore[misc]
    assert fix == ("Never write into W: allocate the result separately. "
                   "`grader explain leaf-inplace` shows it live.")
