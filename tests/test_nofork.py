"""The filter that keeps a watched child from starting processes: every way Python starts one
fails, threads still start (but not where the autograd watch runs), and the filter holds in
the processes it could not start anyway."""

from __future__ import annotations

import os
import platform

import pytest

from grader.runner.nofork import forbid_machine_wide_holds, forbid_new_processes

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


def _threadless_child(attempt: str) -> int:
    """Exit status of a forked process that warms the watch's profiler, installs the filter
    with threads refused, then makes the attempt: 0 when a thread was refused (or, for the
    profile, when the profiler still recorded autograd's engine), 1 otherwise, 2 when the
    filter could not be installed."""
    pid = os.fork()
    if pid == 0:
        code = 3
        try:
            from grader.probes.autograd import ENGINE_EVENT, autodiff_watch, warm_the_profiler

            warm_the_profiler()
            if not forbid_new_processes(threads=False):
                os._exit(2)
            if attempt == "profile":
                import torch

                with autodiff_watch().profile() as recorded:
                    (torch.ones(3, requires_grad=True) * 2).sum().backward()
                names = [e.name for e in recorded.function_events]
                code = 0 if any(n.startswith(ENGINE_EVENT) for n in names) else 1
            else:
                try:
                    if attempt == "threading":
                        import threading

                        threading.Thread(target=int).start()
                    elif attempt == "_thread":
                        import _thread

                        _thread.start_new_thread(int, ())
                    elif attempt == "pool":
                        from concurrent.futures import ThreadPoolExecutor

                        with ThreadPoolExecutor(2) as pool:
                            pool.submit(int).result()
                    elif attempt == "fork":
                        if os.fork() == 0:
                            os._exit(0)
                    code = 1
                except (RuntimeError, PermissionError):
                    code = 0
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status)


@pytest.mark.parametrize("attempt", ["threading", "_thread", "pool", "fork", "profile"])
def test_where_the_autograd_watch_runs_no_thread_starts_and_the_profiler_still_records(
        attempt: str) -> None:
    """The watch's saved-tensor count and torch function mode see the calling thread alone:
    a thread started by any means is refused, while the profiler, whose thread was made
    before the filter, still records autograd's engine."""
    assert _threadless_child(attempt) == 0


def test_every_plan_that_watches_autograd_refuses_processes_and_threads() -> None:
    """A watched plan's child gets both filters whichever plans share it: after a child dies,
    the next check runs in a fresh child of its own, and a depth or a count watched for
    autograd must not run there with threads allowed."""
    from grader.checks.base import Plan, passed

    def judge(data: object) -> object:
        return passed()

    for plan in (Plan("p", {}, judge, forkless=True), Plan("p", {}, judge, watched=True)):
        assert plan.processless and plan.threadless
    assert not Plan("p", {}, judge, watched=True, uses_device=True).threadless
    assert not Plan("p", {}, judge).processless and not Plan("p", {}, judge).threadless


HOLDS = {
    "unshare a user namespace": "libc.unshare(0x10000000)",
    "unshare a UTS namespace": "libc.unshare(0x04000000)",
    "unshare a network namespace": "libc.unshare(0x40000000)",
    "clone into a PID namespace": "libc.syscall(56, 0x20000000 | 17, 0, 0, 0, 0)",
    "join the parent's namespace": "libc.setns(os.open(f'/proc/{os.getppid()}/ns/uts', 0), 0)",
    "lease a file": "libc.fcntl(os.open(os.__file__, os.O_RDONLY), 1024, 0)",  # F_RDLCK
    "watch files": "libc.inotify_init1(0)",
}


@pytest.mark.parametrize("attempt", HOLDS)
def test_a_child_can_hold_nothing_the_whole_machine_shares(attempt: str) -> None:
    """Every way to a namespace, a lease on a file every process opens, or an inotify
    instance (both counted or felt machine-wide) fails with EPERM under the filter, as root
    too, who could otherwise take any; while a fork, a thread, an unshare of no namespace and
    an ordinary fcntl still work."""
    import ctypes
    import threading

    if attempt.startswith("clone") and platform.machine() != "x86_64":
        pytest.skip("the raw clone call here is x86_64's")
    pid = os.fork()
    if pid == 0:
        code = 3
        try:
            libc = ctypes.CDLL(None, use_errno=True)
            if not forbid_machine_wide_holds():
                os._exit(2)
            failed = eval(HOLDS[attempt], {"libc": libc, "os": os}) == -1
            refused = failed and ctypes.get_errno() == 1
            if (child := os.fork()) == 0:
                os._exit(0)
            os.waitpid(child, 0)
            thread = threading.Thread(target=int)
            thread.start()
            thread.join()
            ordinary = libc.unshare(0x00000400) == 0 and \
                libc.fcntl(os.open(os.__file__, os.O_RDONLY), 3) >= 0  # CLONE_FILES, F_GETFL
            code = 0 if refused and ordinary else 1
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0

