"""Prose files: wrapped lines join into paragraphs, indented lines (a snippet, a near-solution)
keep their own lines, one under the other."""

from __future__ import annotations

from grader.engine.prose import parse

DOC = """---
summary: a test
---
## snippet
The interviewer runs
this:
    A = torch.ones(2)
    A.mul_(2)

## after
Done.
"""


def test_indented_lines_follow_each_other_and_prose_joins() -> None:
    doc = parse(DOC, "demo.md")
    assert doc.text("snippet") == "The interviewer runs this:\nA = torch.ones(2)\nA.mul_(2)"
    assert doc.text("after") == "Done."
