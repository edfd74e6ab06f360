"""A whole round written into a temporary folder: proof that adding a round needs nothing but
its own folder (no edit of the engine), and a place for runner tests' own probes.

The round `tiny-sum` has one part: `total(x)` returns x.sum(). Its probes.py also holds probes
the runner tests use (the address-space cap, a slow probe).
"""

from __future__ import annotations

from pathlib import Path

ROUND_ID = "tiny-sum"

ROUND_TOML = '''\
id = "tiny-sum"
title = "A tiny round for the tests"
summary = "total(x) = x.sum()"
flavors = ["numpy", "torch"]
minutes = 5

[[parts]]
id = "part1"
title = "Sum"
file = "part1_sum.py"
functions = ["total"]
weight = 10
budget = 5
hints = ["Add the entries.", "Use the library's sum.", "return x.sum()", "That is all."]
'''

CHECKS_TOML = '''\
[[check]]
id = "part1.correctness"
kind = "correctness"
title = "Sums every entry"
points = 3
function = "total"
cases = "vectors"
args = ["x"]
truth = "truth"
name = "total"
mistakes = ["first-dropped"]
hint = "Add every entry of x."

[[check]]
id = "part1.unchanged"
kind = "inputs_unchanged"
title = "Leaves x unchanged"
points = 1
function = "total"
case = "one_vector"
args = ["x"]
hint = "Read x, never write it."

[mistakes.first-dropped]
output = "without_first"
hint = "the first entry is left out: start the sum at x[0]."
'''

CHECKS_PY = '''\
"""Judge side of the tiny round."""

import numpy as np

from grader.round_api.judge import Case


def vectors(rng):
    return [Case({"x": rng.standard_normal(n).astype(dtype)}, (("N", n),), dtype)
            for n in (1, 2, 5, 9) for dtype in ("float64", "float32")]


def one_vector(rng):
    return Case({"x": rng.standard_normal(4)}, (("N", 4),))


def truth(case):
    return np.asarray(case["x"].astype(np.float64).sum())


def without_first(case):
    return np.asarray(case["x"].astype(np.float64)[1:].sum())


def follow_args(seed):
    return {"n": 3}
'''

PROBES_PY = '''\
"""Candidate side of the tiny round, and probes of the runner's tests."""

import resource
import time


def address_space_capped(api):
    return resource.getrlimit(resource.RLIMIT_AS)[0] != resource.RLIM_INFINITY


def raise_address_space_cap(api):
    """What code under test would do to lift its cap; capped still, afterwards?"""
    for limits in ((resource.RLIM_INFINITY, resource.RLIM_INFINITY),
                   (resource.getrlimit(resource.RLIMIT_AS)[1],) * 2):
        try:
            resource.setrlimit(resource.RLIMIT_AS, limits)
        except (ValueError, OSError):
            pass
    return address_space_capped(api)


def slow(api, seconds):
    time.sleep(seconds)
    return True


def spin(api, seconds, hidden=False, rest=0.0):
    """Burn CPU for `seconds`, in a process of its own that it waits for when `hidden`; first
    asleep for `rest` seconds (as a process is kept from running: stopped, frozen, blocked on
    the disk)."""
    time.sleep(rest)
    if hidden:
        import os
        pid = os.fork()
        if pid == 0:
            spin(api, seconds)
            os._exit(0)
        os.waitpid(pid, 0)
        return "hidden"
    end = time.process_time() + seconds
    while time.process_time() < end:
        pass
    return "spun"


def stop_self(api, times):
    """Stop this process with SIGSTOP `times` times over, as code that pauses itself would."""
    import os, signal
    for _ in range(times):
        os.kill(os.getpid(), signal.SIGSTOP)
    return "woke"


def spin_yielded(api, policy, cpu, seconds):
    """Give this process's CPU away (nice 19, its parent's too, the idle policy, or a session
    of its own whose autogroup is at nice 19: no privilege needed), pinned to `cpu`, then burn
    `seconds`."""
    import os
    os.sched_setaffinity(0, {cpu})
    if policy == "idle":
        os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))
    elif policy == "autogroup":  # a process group's leader has no session of its own
        pid = os.fork()
        if pid:
            os.waitpid(pid, 0)
            return "spun"
        os.setsid()
        with open("/proc/self/autogroup", "w") as group:
            group.write("19")
        spin(api, seconds)
        os._exit(0)
    elif policy == "parent":  # its parent first, so that the two look alike from there
        try:
            os.setpriority(os.PRIO_PROCESS, os.getppid(), 19)
        except PermissionError:  # the filter lets a child set its own priority alone
            pass
        os.nice(19)
    else:
        os.nice(19)
    return spin(api, seconds)


UNREAPED = """
import os, signal, time
signal.signal(signal.SIGCHLD, signal.SIG_IGN)
while True:
    if os.fork() == 0:
        end = time.process_time() + 0.1
        while time.process_time() < end:
            pass
        os._exit(0)
    time.sleep(0.11)
"""


def spin_unreaped(api, seconds):
    """Burn CPU for `seconds` in short-lived processes the kernel reaps unasked (their parent,
    a small program of its own, ignores SIGCHLD), whose time reaches no parent's account, while
    this process sleeps."""
    import subprocess, sys
    helper = subprocess.Popen([sys.executable, "-S", "-c", UNREAPED])
    time.sleep(seconds)
    helper.kill()
    return "spun"


def spin_grid(api, rows, columns, seconds):
    """A diagnosis's grid of answers (one per row and column), after burning `seconds`."""
    spin(api, seconds)
    return [[f"{row}{column}" for column in columns] for row in rows]


def clock(api, tag=""):
    """When this process ran, and with what tag: the order of a measurement's processes."""
    return [time.monotonic(), tag]


def leave_behind(api, path):
    """Start a process in a session of its own that sleeps for a minute; write its pid to
    `path`."""
    import subprocess, sys
    left = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"],
                            start_new_session=True)
    with open(path, "w") as out:
        out.write(str(left.pid))
    return True


def demo(api, n):
    value = api.function("total")(api.backend.native(__import__("numpy").ones(n)))
    return {"total": float(value), "raised": None}
'''

STUB = '''\
"""The tiny round: return the sum of every entry of x ({flavor} flavor)."""


def total(x):
    raise NotImplementedError("write total")
'''

REFERENCE = '''\
"""Reference: the sum of every entry."""


def total(x):
    return x.sum()
'''

TOPIC = '''\
---
summary: adding things up
---
## explanation
A sum adds every entry.

```python
print("sum:", sum([1, 2, 3]))
```
'''

FOLLOWUP = '''\
---
probe: demo
args: follow_args
topics: sums
---
## question
What is the sum of three ones?

## answer
It is the count of the ones.

Your code said {total}.
'''


def write_tiny_round(folder: Path) -> Path:
    """Write the round into folder/tiny-sum and return that folder."""
    root = folder / ROUND_ID
    files = {
        "round.toml": ROUND_TOML, "checks.toml": CHECKS_TOML, "checks.py": CHECKS_PY,
        "probes.py": PROBES_PY, "topics/sums.md": TOPIC, "followups/part1.md": FOLLOWUP,
    }
    for flavor in ("numpy", "torch"):
        files[f"stubs/{flavor}/__init__.py"] = '"""Tiny round."""\n'
        files[f"stubs/{flavor}/part1_sum.py"] = STUB.format(flavor=flavor)
        files[f"reference/{flavor}/__init__.py"] = '"""Tiny round references."""\n'
        files[f"reference/{flavor}/part1_sum.py"] = REFERENCE
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return root
