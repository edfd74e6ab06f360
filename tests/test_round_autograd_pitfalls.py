"""The autograd-pitfalls round beyond its solution matrix: the pristine stubs' own bugs are named
on the first check, the interviewer's follow-ups run the original buggy code beside the
candidate's fix, and every topic's demonstration shows what its text claims."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from grader.candidate.explain import run_demos
from grader.checks.followups import followup_for, model_answer
from grader.engine.prose import topics
from grader.engine.rounds import get_round
from grader.runner import Request

from helpers import SOLUTIONS_DIR, checks_by_id, write_workspace

ROUND = get_round("autograd-pitfalls")


def follow_ups(grading: Any, root: Path) -> dict[str, dict[str, Any]]:
    return grading.worker.follow_up(Request(id="followups", root=str(root), round=ROUND.id,
                                            flavor="torch", parts=list(ROUND.part_ids), seed=1))


def test_each_stub_fails_with_its_own_bug_named(grading: Any, tmp_path: Path) -> None:
    """A candidate who runs the checks before touching anything learns what the bug is."""
    root = write_workspace(tmp_path / "ws", "torch", "stubs", round_=ROUND)
    checks = checks_by_id(grading.run(root, "torch", ROUND.part_ids, round_id=ROUND.id))
    named = {"part1.training": "Gradients accumulate",
             "part2.update": "on a leaf that requires grad",
             "part3.no_graph": "Evaluation still records a graph",
             "part3.flat_memory": "keeps every step's loss tensor",
             "part4.gradients": "The first backward freed",
             "part5.changed": "Only the head trained"}
    for check_id, words in named.items():
        assert checks[check_id].status == "failed"
        assert words in (checks[check_id].hint or ""), (check_id, checks[check_id].hint)
    assert all(c.score == 0 for c in checks.values())


WARM_SCRIPT = """
import os, sys
import torch
from grader.engine.rounds import get_round
from grader.runner import strays
from grader.runner.children import probe_helpers

def imported_by_a_child():
    read_fd, write_fd = os.pipe()
    pid = strays.fork()
    if pid == 0:
        before = set(sys.modules)
        torch.optim.Adam([torch.zeros(2, requires_grad=True)], lr=0.1)
        torch.optim.SGD([torch.zeros(2, requires_grad=True)], lr=0.1, momentum=0.9)
        os.write(write_fd, str(len(set(sys.modules) - before)).encode())
        os._exit(0)
    os.close(write_fd)
    os.waitpid(pid, 0)
    return int(os.read(read_fd, 64))

print(imported_by_a_child(), end=" ")
probe_helpers(get_round("autograd-pitfalls"))
print(imported_by_a_child())
"""


def test_a_child_makes_its_optimizers_with_what_the_worker_imported() -> None:
    """The round's probes warm the process that forks the children: a child forked before
    makes its first optimizer by importing hundreds of modules (torch._dynamo, about a second,
    paid again by every child that trains), one forked after imports none."""
    import sys

    from helpers import SESSION_ENV, run_owned

    done = run_owned([sys.executable, "-c", WARM_SCRIPT], env=SESSION_ENV, timeout=120)
    assert done.returncode == 0, done.stderr
    cold, warm = map(int, done.stdout.split())
    assert cold > 100
    assert warm == 0


def test_followups_show_the_original_symptom_beside_the_fix(grading: Any,
                                                           tmp_path: Path) -> None:
    root = write_workspace(tmp_path / "ws", "torch", "reference", round_=ROUND)
    found = follow_ups(grading, root)
    assert {e["status"] for e in found.values()} == {"demonstrated"}

    values = found["part1"]["values"]
    stub_norms = [float(v) for v in values["stub_norms"].split(", ")]
    your_norms = [float(v) for v in values["your_norms"].split(", ")]
    assert stub_norms[0] == your_norms[0] and stub_norms[-1] > 2 * your_norms[-1]

    (shown,) = found["part2"]["shown"]
    assert "leaf Variable that requires grad" in shown["raised"]["message"]
    assert found["part2"]["answer"] == ["answer", "noticed"]

    assert found["part3"]["values"]["stub_alive"] == "3, 15, 63"
    assert found["part3"]["values"]["your_alive"] == "1, 1, 1"
    assert found["part3"]["values"]["your_saved"] == "0, 0, 0"

    (shown,) = found["part4"]["shown"]
    assert "backward through the graph a second time" in shown["raised"]["message"]
    assert found["part4"]["values"]["verdict"] == "equal"

    assert found["part5"]["values"]["stub_changed"] == "head"
    assert found["part5"]["values"]["your_changed"] == "adapter, head"
    answer = model_answer(followup_for(ROUND, "part3", "torch"), found["part3"])
    assert "3, 15, 63 for 4, 16, 64 batches" in answer


def test_a_data_update_is_caught_in_the_followup(grading: Any, tmp_path: Path) -> None:
    """A .data update passes part2.update; the follow-up shows what it hides."""
    files = {"part2_sgd_update.py": SOLUTIONS_DIR / ROUND.id / "part2_data_inplace" /
             "part2_sgd_update.py"}
    root = write_workspace(tmp_path / "ws", "torch", "reference", files, ROUND)
    evidence = follow_ups(grading, root)["part2"]
    assert evidence["answer"] == ["answer", "hidden"]
    assert "the .data trap" in model_answer(followup_for(ROUND, "part2", "torch"), evidence)


def test_a_followup_on_code_that_raises_says_why(grading: Any, tmp_path: Path) -> None:
    root = write_workspace(tmp_path / "ws", "torch", "stubs", round_=ROUND)
    evidence = follow_ups(grading, root)["part4"]
    assert evidence["status"] == "unavailable"
    assert "second time" in evidence["why"]


@pytest.mark.parametrize(("name", "shown"), [
    ("grad-accumulation", "step 2 w.grad = [6.0, 6.0]"),
    ("leaf-inplace", "a leaf Variable that requires grad is being used in an in-place"),
    ("dot-data", "gradient after a .data write: [0.0, 0.0, 0.0]"),
    ("version-counter", "modified by an inplace operation"),
    ("no-graph", "does not require grad and does not have a grad_fn"),
    ("no-grad-evaluation", "under no_grad(): grad_fn None | saved 0"),
    ("graph-lifetime", "total is a float"),
    ("graph-freed", "double counted? True"),
    ("detach-and-freezing", "detach after the adapter: ['head']"),
    ("anomaly-detection", "forward traceback recorded: True"),
])
def test_each_topic_demonstrates_what_it_claims(name: str, shown: str) -> None:
    printed = "".join(output for _, output in run_demos(topics(ROUND)[name]))
    assert shown in printed
    assert "Traceback (most recent call last)" not in printed
