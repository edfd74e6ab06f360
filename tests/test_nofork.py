"""The filter that keeps a watched child from starting processes: every way Python starts one
fails, threads still start, and the filter holds in the processes it could not start anyway."""

from __future__ import annotations

import os
import platform

import pytest

from grader.runner.nofork import forbid_new_processes

pytestmark = pytest.mark.skipif(platform.machine() not in ("x86_64", "aarch64"),
                                reason="the filter knows x86_64's and aarch64's system calls")


def _in_a_child(attempt: str) -> int:
    """Exit status of a forked process that installs the filter and then makes the attempt:
    0 when it was refused with EPERM (or, for a thread, when it ran), 1 when it succeeded, 2
    when the filter could not be installed."""
    pid = os.fork()
    if pid == 0:
        code = 3
        try:
            if not forbid_new_processes():
                os._exit(2)
            if attempt == "thread":
                import threading

                ran = []
                thread = threading.Thread(target=lambda: ran.append(1))
                thread.start()
                thread.join()
                code = 0 if ran else 1
            else:
                try:
                    if attempt == "fork":
                        if os.fork() == 0:
                            os._exit(0)
                    elif attempt == "subprocess":
                        import subprocess

                        subprocess.run(["true"], check=False)
                    elif attempt == "posix_spawn":
                        os.posix_spawn("/bin/true", ["true"], dict(os.environ))
                    elif attempt == "multiprocessing":
                        import multiprocessing

                        process = multiprocessing.get_context("fork").Process(target=int)
                        process.start()
                        process.join()
                    code = 1
                except PermissionError:
                    code = 0
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status)


@pytest.mark.parametrize("attempt", ["fork", "subprocess", "posix_spawn", "multiprocessing",
                                     "thread"])
def test_a_filtered_process_starts_threads_and_no_process(attempt: str) -> None:
    assert _in_a_child(attempt) == 0
