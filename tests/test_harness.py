"""The suite's own wait for the processes its tests start (helpers.finish): like the grader's
wait for a child, its limit counts work (CPU time and sleep), so a busy machine slows a test
without failing it, and a process that hangs still ends the test."""

from __future__ import annotations

import subprocess
import sys
import time

import pytest

from grader.runner import strays

from helpers import finish, run_owned


def test_a_process_the_machine_starves_is_waited_for_past_its_limit(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Seen runnable at every look and charged no CPU time (a machine too busy to run it): the
    wait goes on past the limit, until the process ends and its output is read whole."""
    monkeypatch.setattr(strays, "tree_usage", lambda pid, **_: strays.Usage(0.0, True))
    began = time.monotonic()
    done = run_owned([sys.executable, "-c", "import time; time.sleep(1.5); print('done')"],
                     timeout=1.0)
    assert (done.returncode, done.stdout) == (0, "done\n")
    assert time.monotonic() - began >= 1.5


@pytest.mark.parametrize("code", ["import time; time.sleep(60)", "while True: pass"])
def test_a_process_that_sleeps_or_spins_through_its_limit_is_killed(code: str) -> None:
    """Asleep or computing, a process that has used its limit is killed and the test told."""
    process = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
    with pytest.raises(subprocess.TimeoutExpired):
        finish(process, 0.5)
    assert process.poll() is not None
