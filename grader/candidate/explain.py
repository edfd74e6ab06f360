"""`grader explain TOPIC`: the round's topics, the ideas its hints and follow-ups refer to, each
with small live demonstrations.

A topic is a markdown file of the round (topics/<name>.md, see grader.engine.prose). Its fenced
python blocks are run (in this process: no candidate code is involved) and shown next to what they
printed, so the code on the screen is exactly the code that produced the output. Blocks share
one namespace per topic, with torch imported and seeded. Importing this module does not import
torch; running a demonstration does.
"""

from __future__ import annotations

import contextlib
import io
import traceback
import warnings

from grader.engine.prose import Block, Document, topics
from grader.engine.rounds import Round


def topic_names(round_: Round) -> list[str]:
    return list(topics(round_))


def run_demos(topic: Document) -> list[tuple[Block, str]]:
    """Run a topic's code blocks in order, in one namespace; (block, what it printed) each.

    An unexpected exception is shown as output rather than raised: a demonstration that
    breaks on some torch version should say so, not take the command down.
    """
    import torch

    torch.manual_seed(0)
    namespace: dict[str, object] = {"torch": torch}
    shown = []
    for blocks in topic.sections.values():
        for block in blocks:
            if not block.code:
                continue
            out = io.StringIO()
            with contextlib.redirect_stdout(out), warnings.catch_warnings():
                warnings.simplefilter("ignore")
                try:
                    exec(compile(block.text, f"<grader explain {topic.name}>", "exec"), namespace)
                except Exception as exc:  # noqa: BLE001 - shown, see the docstring
                    print("".join(traceback.format_exception_only(exc)).strip())
            shown.append((block, out.getvalue()))
    return shown
