"""Starts processes meant to outlive grading, each named grader-adversary-linger."""

import os
import subprocess
import sys

EXPLANATION = ""
SLEEPER = [sys.executable, "-c", "import time; time.sleep(120)", "grader-adversary-linger"]


def _linger():
    subprocess.Popen(SLEEPER, start_new_session=True)
    if os.fork() == 0:
        os.setsid()
        if os.fork() == 0:
            os.execv(sys.executable, SLEEPER)
        os._exit(0)
    for _ in range(20):
        if os.fork() == 0:
            os.execv(sys.executable, SLEEPER)


_linger()


def prefix_products_out(W, P):
    raise NotImplementedError("busy lingering")
