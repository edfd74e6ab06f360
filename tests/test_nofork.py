"""The filter that keeps a watched child from starting processes: every way Python starts one
fails, threads still start (but not where the autograd watch runs), and the filter holds in
the processes it could not start anyway."""

from __future__ import annotations

import os
import platform
import resource
from collections.abc import Callable

import pytest

from grader.runner.child import CORE_LIMIT, PER_USER_CAPS, apply_limits
from grader.runner.nofork import (
    REFUSED,
    drop_ptrace_capability,
    forbid_machine_wide_holds,
    forbid_new_processes,
)

pytestmark = pytest.mark.skipif(platform.machine() not in ("x86_64", "aarch64"),
                                reason="the filter knows x86_64's and aarch64's system calls")


def _exit_code_of(body: Callable[[], int]) -> int:
    """The exit status of a forked child that runs `body` (its answer the status; 3 where it
    raised)."""
    pid = os.fork()
    if pid == 0:
        code = 3
        try:
            code = body()
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status)


def _in_a_child(attempt: str) -> int:
    """Exit status of a forked process that installs the filter and then makes the attempt:
    0 when it was refused with EPERM (or, for a thread, when it ran), 1 when it succeeded, 2
    when the filter could not be installed."""
    def attempted() -> int:
        if not forbid_new_processes():
            return 2
        if attempt == "thread":
            import threading

            ran = []
            thread = threading.Thread(target=lambda: ran.append(1))
            thread.start()
            thread.join()
            return 0 if ran else 1
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
            return 1
        except PermissionError:
            return 0

    return _exit_code_of(attempted)


@pytest.mark.parametrize("attempt", ["fork", "subprocess", "posix_spawn", "multiprocessing",
                                     "thread"])
def test_a_filtered_process_starts_threads_and_no_process(attempt: str) -> None:
    assert _in_a_child(attempt) == 0


def _threadless_child(attempt: str) -> int:
    """Exit status of a forked process that warms the watch's profiler, installs the filter
    with threads refused, then makes the attempt: 0 when a thread was refused (or, for the
    profile, when the profiler still recorded autograd's engine), 1 otherwise, 2 when the
    filter could not be installed."""
    def attempted() -> int:
        from grader.probes.autograd import ENGINE_EVENT, autodiff_watch, warm_the_profiler

        warm_the_profiler()
        if not forbid_new_processes(threads=False):
            return 2
        if attempt == "profile":
            import torch

            with autodiff_watch().profile() as recorded:
                (torch.ones(3, requires_grad=True) * 2).sum().backward()
            names = [e.name for e in recorded.function_events]
            return 0 if any(n.startswith(ENGINE_EVENT) for n in names) else 1
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
            return 1
        except (RuntimeError, PermissionError):
            return 0

    return _exit_code_of(attempted)


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
    "give a thread a table of open files of its own": "libc.unshare(0x00000400)",
    # CLONE_THREAD | CLONE_SIGHAND | CLONE_VM, without CLONE_FILES (x86_64's raw clone)
    "clone a thread with a table of open files of its own": "libc.syscall(56, 0x10900, 0, 0, 0, 0)",
    "clone into a PID namespace": "libc.syscall(56, 0x20000000 | 17, 0, 0, 0, 0)",
    "join the parent's namespace": "libc.setns(os.open(f'/proc/{os.getppid()}/ns/uts', 0), 0)",
    "lease a file": "libc.fcntl(os.open(os.__file__, os.O_RDONLY), 1024, 0)",  # F_RDLCK
    "grow a pipe's buffer": "libc.fcntl(os.pipe()[0], 1031, 1 << 20)",  # F_SETPIPE_SZ
    "watch files": "libc.inotify_init1(0)",
}


@pytest.mark.parametrize("attempt", HOLDS)
def test_a_child_can_hold_nothing_the_whole_machine_shares(attempt: str) -> None:
    """Every way to a namespace, a lease on a file every process opens, or an inotify
    instance (both counted or felt machine-wide), or to a thread's own table of open files
    (whose files no count of its process's sees), fails with EPERM under the filter, as root
    too, who could otherwise take any; while a fork, a thread, an unshare of no namespace nor
    file table and an ordinary fcntl still work."""
    import ctypes
    import threading

    if attempt.startswith("clone") and platform.machine() != "x86_64":
        pytest.skip("the raw clone call here is x86_64's")

    def hold() -> int:
        libc = ctypes.CDLL(None, use_errno=True)
        if not forbid_machine_wide_holds():
            return 2
        failed = eval(HOLDS[attempt], {"libc": libc, "os": os}) == -1
        refused = failed and ctypes.get_errno() == 1
        if (child := os.fork()) == 0:
            os._exit(0)
        os.waitpid(child, 0)
        thread = threading.Thread(target=int)
        thread.start()
        thread.join()
        ordinary = libc.unshare(0x00000200) == 0 and \
            libc.fcntl(os.open(os.__file__, os.O_RDONLY), 3) >= 0  # CLONE_FS, F_GETFL
        return 0 if refused and ordinary else 1

    assert _exit_code_of(hold) == 0


SOCKETS = {
    "a pair of Unix sockets": ("socket.socketpair()", 0),
    "a Unix seqpacket socket": ("socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)", 0),
    "TCP, non-blocking": (
        "socket.socket(socket.AF_INET, socket.SOCK_STREAM | socket.SOCK_NONBLOCK)", 0),
    "UDP over IPv6": ("socket.socket(socket.AF_INET6, socket.SOCK_DGRAM, 17)", 0),
    "routing netlink": ("socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, 0)", 0),
    "a packet socket": ("socket.socket(socket.AF_PACKET, socket.SOCK_DGRAM)", 97),
    "the kernel's crypto": ("socket.socket(socket.AF_ALG, socket.SOCK_SEQPACKET)", 97),
    "a pair of Bluetooth sockets": ("socket.socketpair(31, socket.SOCK_STREAM)", 97),
    "SCTP": ("socket.socket(socket.AF_INET, socket.SOCK_STREAM, 132)", 93),
    "a stream over UDP": ("socket.socket(socket.AF_INET6, socket.SOCK_STREAM, 17)", 93),
    "datagrams over TCP": ("socket.socket(socket.AF_INET, socket.SOCK_DGRAM, 6)", 93),
    "TCP's datagrams, paired": ("socket.socketpair(socket.AF_INET, socket.SOCK_DGRAM, 6)", 93),
    "an IP seqpacket socket": ("socket.socket(socket.AF_INET6, socket.SOCK_SEQPACKET)", 93),
    "an audit netlink": ("socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, 9)", 93),
}


@pytest.mark.parametrize("kind", SOCKETS)
def test_a_child_makes_only_the_sockets_every_kernel_has_built_in(kind: str) -> None:
    """A kernel asked for a socket family, type or protocol it has not loaded starts modprobe,
    as root, outside every sandbox, for each such call; under the filter only Unix sockets,
    TCP and UDP (IPv4 and IPv6) and routing netlink are made, and any other socket is refused
    as a kernel without it would refuse it (EAFNOSUPPORT, EPROTONOSUPPORT), before the kernel
    looks for it; getaddrinfo still answers."""
    import socket

    def attempt() -> int:
        if not forbid_machine_wide_holds():
            return 2
        try:
            eval(SOCKETS[kind][0], {"socket": socket})
            got = 0
        except OSError as exc:
            got = exc.errno or -1
        if got != SOCKETS[kind][1]:
            return 10 + got % 200
        return 0 if socket.getaddrinfo("localhost", 80) else 3

    assert _exit_code_of(attempt) == 0


def _holds_filter(monkeypatch: pytest.MonkeyPatch) -> Callable[[int, tuple[int, ...]], int]:
    """The filter on machine-wide holds as this machine would install it, run on a call (its
    number, its arguments) by a small interpreter of the instructions it uses: what it answers,
    0 to let the call through, else the errno it returns (an answer the kernel could give as
    well is then the filter's, not the kernel's)."""
    import struct

    from grader.runner import nofork

    made: list[nofork.Program] = []
    monkeypatch.setattr(nofork, "_install", lambda program: made.append(program) or True)
    if platform.machine() not in nofork._SYSCALLS or not forbid_machine_wide_holds():
        pytest.skip("no seccomp filter for this machine's architecture")
    arch = nofork._SYSCALLS[platform.machine()][0]

    def answer(number: int, args: tuple[int, ...]) -> int:
        data = struct.pack("<iIQ6Q", number, arch, 0, *(list(args) + [0] * 6)[:6])
        accumulator, at = 0, 0
        while True:
            code, true, false, k = made[0][at]
            at += 1
            if code == nofork._LD_W_ABS:
                accumulator = struct.unpack_from("<I", data, k)[0]
            elif code == nofork._ALU_AND_K:
                accumulator &= k
            elif code in (nofork._JEQ_K, nofork._JGE_K, nofork._JSET_K):
                taken = {nofork._JEQ_K: accumulator == k, nofork._JGE_K: accumulator >= k,
                         nofork._JSET_K: bool(accumulator & k)}[code]
                at += true if taken else false
            else:
                return 0 if k == nofork._ALLOW else k & 0xFFFF

    return answer


FILTERED_SOCKETS = {  # (family, type, protocol): the filter's answer
    (1, 5, 0): 0, (2, 1, 0): 0, (2, 1, 6): 0, (10, 2, 17): 0, (2, 2 | 0o4000, 0): 0,
    (16, 3, 0): 0, (2, 1, 17): 93, (10, 1, 17): 93, (2, 2, 6): 93, (2, 1 | 0o2000000, 17): 93,
    (2, 5, 0): 93, (2, 3, 0): 93, (2, 1, 132): 93, (16, 3, 9): 93, (38, 5, 0): 97,
    (17, 3, 0): 97, (31, 1, 0): 97,
}


@pytest.mark.parametrize("kind", FILTERED_SOCKETS, ids=str)
def test_the_filter_itself_refuses_every_socket_a_kernel_may_have_to_load(
        monkeypatch: pytest.MonkeyPatch, kind: tuple[int, int, int]) -> None:
    """Where a kernel without a module answers as the filter does (EPROTONOSUPPORT for TCP
    asked of a datagram socket), a kernel with modules first starts modprobe: the filter must
    give the answer itself, for socket and socketpair alike, and pair each type with its own
    protocol."""
    from grader.runner.nofork import _SCREENED_CALLS

    answer = _holds_filter(monkeypatch)
    socket_call, socketpair_call = _SCREENED_CALLS[platform.machine()][4:6]
    assert answer(socket_call, kind) == answer(socketpair_call, (*kind, 0)) == \
        FILTERED_SOCKETS[kind]


def test_a_child_loads_no_line_discipline_nor_tcp_signature_while_its_kin_calls_go_through(
        ) -> None:
    """On a kernel that loads modules, a line discipline set on a terminal (TIOCSETD on
    /dev/ptmx, which is in the sandbox) and TCP's MD5 or AO signatures (their hashes, loaded by
    name) have the kernel start modprobe as root, outside the sandbox: under the filter each is
    refused (EPERM), while another terminal ioctl and other TCP and socket options work."""
    import errno
    import fcntl
    import socket
    import struct

    def attempt() -> int:
        if not forbid_machine_wide_holds():
            return 2
        terminal = os.open("/dev/ptmx", os.O_RDWR | os.O_NOCTTY)
        tcp = socket.socket()
        loads: list[Callable[[], object]] = [
            lambda: fcntl.ioctl(terminal, 0x5423, struct.pack("i", 0)),  # TIOCSETD: N_TTY
            lambda: tcp.setsockopt(socket.IPPROTO_TCP, 14, bytes(216)),  # TCP_MD5SIG
            lambda: tcp.setsockopt(socket.IPPROTO_TCP, 38, bytes(64))]  # TCP_AO_ADD_KEY
        for load in loads:
            try:
                load()
            except OSError as exc:
                if exc.errno == errno.EPERM:
                    continue
            return 3
        fcntl.ioctl(terminal, 0x5413, bytes(8))  # TIOCGWINSZ
        tcp.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        tcp.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        return 0 if tcp.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY) else 4

    assert _exit_code_of(attempt) == 0


def test_code_that_asks_for_the_default_selector_gets_poll_under_the_filter() -> None:
    """epoll is refused, and Python's selectors, imported before the filter (subprocess
    imports it, and the worker imports subprocess), had chosen it: an event loop, which asks
    for the default selector, still runs, on poll."""
    import asyncio
    import selectors

    def loop() -> int:
        if not forbid_machine_wide_holds():
            return 2
        answer = asyncio.run(asyncio.sleep(0, result=7))
        return 0 if answer == 7 and selectors.DefaultSelector is selectors.PollSelector else 1

    assert _exit_code_of(loop) == 0


@pytest.mark.parametrize("call", sorted(REFUSED))
def test_every_call_that_makes_a_per_user_count_is_refused_whatever_its_arguments(
        call: str) -> None:
    """Each refused call answers EPERM under the filter, with any arguments: without it, the
    same call with these arguments answers something else (EINVAL, EFAULT, EBADF) or succeeds,
    as root."""
    import ctypes

    number = REFUSED[call].get(platform.machine())
    if number is None:
        pytest.skip(f"{call} is not a call on {platform.machine()}")

    def attempt(filtered: bool) -> int:
        libc = ctypes.CDLL(None, use_errno=True)
        if filtered and not forbid_machine_wide_holds():
            return 2
        answer = libc.syscall(number, 0, 0, 0, 0, 0)
        return 0 if answer == -1 and ctypes.get_errno() == 1 else 1

    assert _exit_code_of(lambda: attempt(True)) == 0
    assert _exit_code_of(lambda: attempt(False)) == 1


def test_a_child_sets_priorities_policies_and_limits_on_itself_alone() -> None:
    """A priority, an I/O priority, a scheduling policy or a limit set on another process
    (the child's parent is the worker or the sandbox's executor, the same user's) is refused,
    and so is a priority set on a process group or a user (as root, every root process on the
    machine); set on itself, by 0 or by its own pid, each still works."""
    import ctypes

    ioprio_set = {"x86_64": 251, "aarch64": 30}.get(platform.machine())

    def attempt() -> int:
        if not forbid_machine_wide_holds():
            return 2
        parent, me = os.getppid(), os.getpid()
        others: list[Callable[[], object]] = [
            lambda: os.setpriority(os.PRIO_PROCESS, parent, 19),
            lambda: os.setpriority(os.PRIO_PGRP, 0, 19),
            lambda: os.setpriority(os.PRIO_USER, 0, 19),
            lambda: os.sched_setscheduler(parent, os.SCHED_IDLE, os.sched_param(0)),
            lambda: os.sched_setparam(parent, os.sched_param(0)),
            lambda: resource.prlimit(parent, resource.RLIMIT_NOFILE, (64, 64)),
            lambda: os.sched_setaffinity(parent, {min(os.sched_getaffinity(0))})]
        for other in others:
            try:
                other()
            except PermissionError:
                continue
            return 1
        libc = ctypes.CDLL(None, use_errno=True)
        if ioprio_set is not None and (libc.syscall(ioprio_set, 1, parent, 7 << 13) != -1
                                       or ctypes.get_errno() != 1):
            return 1
        os.setpriority(os.PRIO_PROCESS, 0, 5)
        os.setpriority(os.PRIO_PROCESS, me, 6)
        resource.setrlimit(resource.RLIMIT_NOFILE, (64, 64))
        resource.prlimit(me, resource.RLIMIT_NOFILE, (32, 32))
        os.sched_setaffinity(0, os.sched_getaffinity(0))
        os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))
        return 0 if os.getpriority(os.PRIO_PROCESS, 0) == 6 else 1

    before = (os.getpriority(os.PRIO_PROCESS, 0), os.sched_getscheduler(0),
              os.sched_getaffinity(0))
    assert _exit_code_of(attempt) == 0
    assert (os.getpriority(os.PRIO_PROCESS, 0), os.sched_getscheduler(0),
            os.sched_getaffinity(0)) == before


def test_a_childs_crash_reaches_no_core_handler_and_it_cannot_change_that() -> None:
    """A machine whose kernel.core_pattern pipes cores to a program (apport, systemd-coredump)
    has the kernel start that program as root, outside every sandbox, for each crash of a
    dumpable process whose core limit is 0 (every process a child execs is dumpable): the
    child's core limit is 1, soft and hard, at which the kernel dumps nothing, and under the
    filter no way to change it (setrlimit, prlimit64 with a new limit, on itself) goes
    through, while reading it and setting other limits still do."""

    def attempt() -> int:
        apply_limits(0)
        if not forbid_machine_wide_holds():
            return 2
        kept = (CORE_LIMIT, CORE_LIMIT)
        if resource.getrlimit(resource.RLIMIT_CORE) != kept:
            return 3
        changes: list[Callable[[], object]] = [
            lambda: resource.setrlimit(resource.RLIMIT_CORE, (0, 0)),
            lambda: resource.setrlimit(resource.RLIMIT_CORE, (0, CORE_LIMIT)),
            lambda: resource.prlimit(0, resource.RLIMIT_CORE, (0, 0)),
            lambda: resource.prlimit(os.getpid(), resource.RLIMIT_CORE, kept)]
        for change in changes:
            try:
                change()
            except (PermissionError, ValueError):  # EPERM, in setrlimit's words or prlimit's
                continue
            return 4
        resource.setrlimit(resource.RLIMIT_NOFILE, (64, 64))
        read = resource.prlimit(os.getpid(), resource.RLIMIT_CORE)
        return 0 if read == kept == resource.getrlimit(resource.RLIMIT_CORE) else 5

    assert _exit_code_of(attempt) == 0


@pytest.mark.skipif(os.geteuid() != 0, reason="only root holds CAP_SYS_PTRACE to drop")
def test_a_child_run_as_root_writes_no_undumpable_parents_memory() -> None:
    """Root keeps CAP_SYS_PTRACE, with which /proc/<pid>/mem of an undumpable process opens
    for writing (code in --no-sandbox patched its worker's heap): a child drops it first.
    Forked from an undumpable parent, as a child of the worker is."""
    import ctypes

    def attempt() -> int:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(4, 0, 0, 0, 0)  # PR_SET_DUMPABLE 0, as the worker sets itself

        def probe() -> int:
            if not drop_ptrace_capability():
                return 2
            try:
                with open(f"/proc/{os.getppid()}/mem", "r+b"):
                    return 1
            except PermissionError:
                return 0

        return _exit_code_of(probe)

    assert _exit_code_of(attempt) == 0


def test_signals_queued_by_a_childs_processes_together_stop_at_its_cap() -> None:
    """Signals queued and not yet taken are counted per user, machine-wide; a child (and each
    process it starts) is capped, so its processes together queue no more than the cap: two
    processes of a capped child, each queueing a blocked real-time signal to itself until
    refused, hold at most the cap between them, where an uncapped process queues on past it."""
    import signal
    import threading

    cap = PER_USER_CAPS[resource.RLIMIT_SIGPENDING]
    chosen = signal.SIGRTMIN + 7

    def queued(most: int) -> int:
        signal.pthread_sigmask(signal.SIG_BLOCK, [chosen])
        count = 0
        while count < most:
            try:
                signal.pthread_kill(threading.get_ident(), chosen)
            except OSError:
                break
            count += 1
        return count

    def capped_pair() -> int:
        apply_limits(0)
        first = queued(4 * cap)
        read, write = os.pipe()
        if (other := os.fork()) == 0:
            os.write(write, queued(4 * cap).to_bytes(4, "little"))
            os._exit(0)
        second = int.from_bytes(os.read(read, 4), "little")
        os.waitpid(other, 0)
        return 0 if 0 < first <= cap and first + second <= cap + 1 else 1

    assert _exit_code_of(capped_pair) == 0
    assert _exit_code_of(lambda: 0 if queued(2 * cap) == 2 * cap else 1) == 0


def test_a_childs_open_files_stop_at_its_cap() -> None:
    """The machine keeps one table of open files for every process, and a sandbox's processes
    are capped in how many each holds (TASKS of them, so the sandbox as a whole is bounded):
    code that opens files until refused is refused by its own limit (EMFILE), at the cap,
    long before the machine's table (ENFILE) could fill; the cap is the hard limit too, which
    a process without CAP_SYS_RESOURCE (every sandboxed one) cannot raise."""
    import errno

    cap = PER_USER_CAPS[resource.RLIMIT_NOFILE]

    def opened_until_refused() -> int:
        apply_limits(0)
        held = []
        try:
            while len(held) < 4 * cap:
                held.append(os.open(os.devnull, os.O_RDONLY))
        except OSError as exc:
            if exc.errno != errno.EMFILE:
                return 1
        hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
        return 0 if cap // 2 < len(held) < cap and hard == cap else 2

    assert _exit_code_of(opened_until_refused) == 0
