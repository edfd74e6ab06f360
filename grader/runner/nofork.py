"""A child process that can start no other process: a seccomp filter, installed before the
candidate's code is imported, under which fork, vfork and clone without CLONE_THREAD fail with
EPERM, and clone3 fails with ENOSYS (so that glibc falls back to clone for its threads). Used
for the checks that watch a call from inside the candidate's process (no autograd), and for
every measured run (CPU time): work sent to a forked process is out of every instrument's
sight, and a process the kernel reaps on its own (started with SIGCHLD ignored) is charged to
no wait4, so there it must not be possible at all (Plan.processless). Where the autograd watch
runs (Plan.threadless) clone is refused with CLONE_THREAD too: its saved-tensor count and
torch function mode see the calling thread alone, so a graph recorded on another thread (and
differentiated through TorchScript, which no Python spy sees) would be out of sight. The
grading processes make no thread of their own (one thread for every math library), and the
profiler's thread is made before the filter (child.py). The filter cannot be lifted by the
process, nor by anything it could start.

A second filter, in every child that runs candidate code (forbid_machine_wide_holds), refuses
what would let the code hold something the whole machine shares, beyond its sandbox: every
namespace (unshare and clone with a CLONE_NEW* flag, and setns), which the machine counts per
user; a thread's table of open files of its own (unshare with CLONE_FILES, or clone of a thread
without it), whose files no count of the process's would see; file leases (fcntl F_SETLEASE),
which make every other process that opens the file wait for up to the lease-break time; and the
calls in REFUSED, each of which makes something the kernel counts per user across the whole
machine (inotify instances, epoll watches, keys and keyrings, fanotify groups, perf events' and
io_uring's locked memory, userfaultfd and BPF objects, and the legacy AIO contexts the machine
has 65,536 of in all) and which no exercise needs; and what would have the kernel start a
program as root outside the sandbox on the code's behalf (a core dump's handler; modprobe, for a
socket, a terminal's line discipline or a TCP signature of a kind not loaded). A sandbox's user
is the grader's outside (root, where the grader runs as root, owns every system file and shares
every per-user count with the machine's daemons): code that made thousands of namespaces would
leave no sandbox for a classmate graded beside it, a lease on the Python files every process
opens would stall the machine's every new Python, and five million epoll watches left no root
daemon one more. Python's selectors fall back to poll where epoll is refused. bwrap 0.8 and
later also closes namespaces for a whole sandbox (--disable-userns); the filter closes them
wherever bwrap is older, and in practice mode. The per-user counts that a limit bounds (pending
signals, POSIX message queues) are capped by the child's limits instead (child.apply_limits)"""

from __future__ import annotations

import ctypes
import os
import platform
import struct
import sys

# seccomp_data: int nr; u32 arch; u64 instruction_pointer; u64 args[6]
_NR, _ARCH, _ARG0, _ARG1 = 0, 4, 16, 24
_LD_W_ABS, _JEQ_K, _JGE_K, _JSET_K, _RET_K = 0x20, 0x15, 0x35, 0x45, 0x06
_ALU_AND_K = 0x54
_ALLOW, _ERRNO = 0x7FFF0000, 0x00050000
_EPERM, _ENOSYS = 1, 38
_CLONE_THREAD = 0x00010000
_X32_BIT = 0x40000000
_PR_SET_NO_NEW_PRIVS, _PR_SET_SECCOMP, _SECCOMP_MODE_FILTER = 38, 22, 2

_CLONE_FILES, _CLONE_THREAD = 0x400, 0x10000
"""The flags for a table of open files of a task's own (unshare's, or clone's without
CLONE_FILES) and for a thread: a thread with a table of its own opens files seen in no
/proc/<pid>/fd of its process, only under its own task, and the count of a tree's files
(strays.files_of) would miss them; a new process (a fork) has its own /proc/<pid>/fd."""
_CLONE_NEW = 0x7E020000
"""CLONE_NEWNS, NEWCGROUP, NEWUTS, NEWIPC, NEWUSER, NEWPID and NEWNET (not NEWTIME, 0x80: in
clone's flags those bits name the exit signal; unshare's NEWTIME needs a capability no child
has)."""

# arch: (audit arch, fork or None, vfork or None, clone, clone3)
_SYSCALLS = {
    "x86_64": (0xC000003E, 57, 58, 56, 435),
    "aarch64": (0xC00000B7, None, None, 220, 435),
}
_F_SETLEASE = 1024
_F_SETPIPE_SZ = 1031
_RLIMIT_CORE = 4
_AF_UNIX, _AF_INET, _AF_INET6, _AF_NETLINK = 1, 2, 10, 16
_IPPROTO_TCP, _IPPROTO_UDP, _NETLINK_ROUTE = 6, 17, 0
_SOCK_STREAM, _SOCK_DGRAM, _SOCK_TYPE_MASK = 1, 2, 0xF
_EPROTONOSUPPORT, _EAFNOSUPPORT = 93, 97
# arch: (unshare, fcntl, setrlimit, prlimit64, socket, socketpair)
_SCREENED_CALLS = {"x86_64": (272, 72, 160, 302, 41, 53), "aarch64": (97, 25, 164, 261, 198, 199)}
REFUSED = {
    "setns": {"x86_64": 308, "aarch64": 268},
    "inotify_init": {"x86_64": 253},
    "inotify_init1": {"x86_64": 294, "aarch64": 26},
    "epoll_create": {"x86_64": 213},
    "epoll_create1": {"x86_64": 291, "aarch64": 20},
    "epoll_ctl": {"x86_64": 233, "aarch64": 21},
    "fanotify_init": {"x86_64": 300, "aarch64": 262},
    "add_key": {"x86_64": 248, "aarch64": 217},
    "request_key": {"x86_64": 249, "aarch64": 218},
    "keyctl": {"x86_64": 250, "aarch64": 219},
    "perf_event_open": {"x86_64": 298, "aarch64": 241},
    "bpf": {"x86_64": 321, "aarch64": 280},
    "userfaultfd": {"x86_64": 323, "aarch64": 282},
    "io_uring_setup": {"x86_64": 425, "aarch64": 425},
    "io_setup": {"x86_64": 206, "aarch64": 0},
    "ptrace": {"x86_64": 101, "aarch64": 117},
    "process_vm_readv": {"x86_64": 310, "aarch64": 270},
    "process_vm_writev": {"x86_64": 311, "aarch64": 271},
    "pidfd_open": {"x86_64": 434, "aarch64": 434},
    "pidfd_getfd": {"x86_64": 438, "aarch64": 438},
    "pidfd_send_signal": {"x86_64": 424, "aarch64": 424},
}
"""The calls refused outright (EPERM) in every child that runs candidate code, by their
numbers on each architecture (a call an architecture lacks is not there to refuse): each makes
or joins something the kernel counts per user, machine-wide (epoll_ctl too, for an epoll
instance a child might inherit), or reads or writes another process's memory or takes its
descriptors (the worker's, or the sandbox's executor's: the same user; pidfd_getfd copied the
worker's pipe)."""

_SELF = -1
"""Stands for the child's own pid in OWN_ONLY."""
_PRIO_PROCESS, _IOPRIO_WHO_PROCESS = 0, 1
OWN_ONLY = {
    "setpriority": ({"x86_64": 141, "aarch64": 140}, ((0, (_PRIO_PROCESS,)), (1, (0, _SELF)))),
    "ioprio_set": ({"x86_64": 251, "aarch64": 30}, ((0, (_IOPRIO_WHO_PROCESS,)),
                                                    (1, (0, _SELF)))),
    "sched_setscheduler": ({"x86_64": 144, "aarch64": 119}, ((0, (0, _SELF)),)),
    "sched_setparam": ({"x86_64": 142, "aarch64": 118}, ((0, (0, _SELF)),)),
    "sched_setattr": ({"x86_64": 314, "aarch64": 274}, ((0, (0, _SELF)),)),
    "prlimit64": ({"x86_64": 302, "aarch64": 261}, ((0, (0, _SELF)),)),
    "sched_setaffinity": ({"x86_64": 203, "aarch64": 122}, ((0, (0, _SELF)),)),
}
"""The calls a child may make on itself alone, by their numbers and the values each argument
may take (argument index, values; _SELF its own pid): a priority, an I/O priority, a
scheduling policy, a CPU affinity or a limit set on another process (its parent, the worker
or the sandbox's executor, is the same user's) would slow or break the grading of every part
after it, and setpriority or ioprio_set on a process group or a user would reach every
process of root's on the machine."""

_TIOCSETD = 0x5423
_TCP_MD5SIG, _TCP_MD5SIG_EXT, _TCP_AO = 14, 32, (38, 39, 40, 41, 42)
REFUSED_WITH = {
    "ioctl": ({"x86_64": 16, "aarch64": 29}, ((1, (_TIOCSETD,)),)),
    "setsockopt": ({"x86_64": 54, "aarch64": 208},
                   ((1, (_IPPROTO_TCP,)), (2, (_TCP_MD5SIG, _TCP_MD5SIG_EXT, *_TCP_AO)))),
}
"""The calls refused (EPERM) with these arguments, by their numbers on each architecture and
the values each named argument holds for the refusal (argument index, values): each would have
a kernel that loads modules start modprobe as root, outside the sandbox, for the code: a line
discipline set on a terminal (TIOCSETD: /dev/ptmx is in the sandbox, and the kernel loads any
discipline asked for by default), TCP's MD5 and AO signatures (their hashes, loaded by name).
None is anything an exercise does."""

Program = list[tuple[int, int, int, int]]


def _this_abi(arch: int) -> Program:
    """The start of every filter: another ABI than this process's is refused outright (a
    32-bit syscall would name other numbers), and the call's number is loaded."""
    deny = _ERRNO | _EPERM
    return [(_LD_W_ABS, 0, 0, _ARCH), (_JEQ_K, 1, 0, arch), (_RET_K, 0, 0, deny),
            (_LD_W_ABS, 0, 0, _NR), (_JGE_K, 0, 1, _X32_BIT), (_RET_K, 0, 0, deny)]


def _refusing(numbers: list[int]) -> Program:
    """Instructions that refuse each of the calls `numbers` (EPERM), the call's number loaded."""
    return [op for number in numbers
            for op in ((_JEQ_K, 0, 1, number), (_RET_K, 0, 0, _ERRNO | _EPERM))]


def _program(arch: int, fork: int | None, vfork: int | None, clone: int,
             clone3: int, threads: bool = True) -> Program:
    """The filter on new processes, as (code, jt, jf, k) instructions: the calls above; with
    `threads` False, every clone."""
    deny, no_such = _ERRNO | _EPERM, _ERRNO | _ENOSYS
    program = _this_abi(arch) + _refusing([n for n in (fork, vfork) if n is not None])
    program += [(_JEQ_K, 0, 1, clone3), (_RET_K, 0, 0, no_such),
                (_JEQ_K, 0, 3, clone), (_LD_W_ABS, 0, 0, _ARG0),
                (_JSET_K, int(threads), 0, _CLONE_THREAD), (_RET_K, 0, 0, deny),
                (_RET_K, 0, 0, _ALLOW)]
    return program


def _own_only(number: int, allowed: tuple[tuple[int, tuple[int, ...]], ...]) -> Program:
    """Instructions that let call `number` through only where each argument named in
    `allowed` holds one of its values (its low 32 bits: a pid's, a `which`'s), the call's
    number loaded; EPERM otherwise."""
    body: Program = []
    for argument, values in allowed:
        body.append((_LD_W_ABS, 0, 0, _ARG0 + 8 * argument))
        body += [(_JEQ_K, len(values) - i, 0, value) for i, value in enumerate(values)]
        body.append((_RET_K, 0, 0, _ERRNO | _EPERM))
    body.append((_RET_K, 0, 0, _ALLOW))
    return [(_JEQ_K, 0, len(body), number), *body]


def _core_limit_kept(setrlimit: int, prlimit64: int) -> Program:
    """Instructions that refuse (EPERM) every change of this process's RLIMIT_CORE, by
    setrlimit or prlimit64 (glibc's setrlimit; a prlimit64 that only reads it, with no new
    limit, goes on), the call's number loaded, and loaded again after: code that lowered it
    from 1 to 0 would have the kernel hand each crash of its to the machine's core handler
    (child.CORE_LIMIT says why)."""
    return _assembled([
        (_JEQ_K, None, "prlimit64", setrlimit), (_LD_W_ABS, None, None, _ARG0),
        (_JEQ_K, "refused", None, _RLIMIT_CORE), (_RET_K, None, None, _ALLOW),
        "prlimit64", (_JEQ_K, None, "reload", prlimit64), (_LD_W_ABS, None, None, _ARG1),
        (_JEQ_K, None, "reload", _RLIMIT_CORE),
        (_LD_W_ABS, None, None, _ARG0 + 16), (_JEQ_K, None, "refused", 0),  # the new limit's
        (_LD_W_ABS, None, None, _ARG0 + 20), (_JEQ_K, "reload", "refused", 0),  # pointer
        "refused", (_RET_K, None, None, _ERRNO | _EPERM),
        "reload", (_LD_W_ABS, None, None, _NR)])


Labelled = list[tuple[int, str | None, str | None, int] | str]
"""Instructions whose jumps name labels (None: on to the next instruction), and the labels
themselves, each a string standing where it marks."""


def _assembled(ops: Labelled) -> Program:
    """`ops` as a filter's instructions, each jump an offset to its label."""
    at: dict[str, int] = {}  # each label's instruction: the count of those before it
    count = 0
    for op in ops:
        if isinstance(op, str):
            at[op] = count
        else:
            count += 1
    program: Program = []
    for op in ops:
        if not isinstance(op, str):
            code, true, false, k = op
            here = len(program) + 1
            program.append((code, 0 if true is None else at[true] - here,
                            0 if false is None else at[false] - here, k))
    return program


def _refused_with(number: int, conditions: tuple[tuple[int, tuple[int, ...]], ...]) -> Program:
    """Instructions that refuse call `number` (EPERM) where every argument named in
    `conditions` holds one of its values (argument index, values; the low 32 bits), the call's
    number loaded, and loaded again after."""
    ops: Labelled = [(_JEQ_K, None, "reload", number)]
    for index, (argument, values) in enumerate(conditions):
        ops += [f"condition {index}", (_LD_W_ABS, None, None, _ARG0 + 8 * argument)]
        ops += [(_JEQ_K, f"condition {index + 1}", None, value) for value in values[:-1]]
        ops.append((_JEQ_K, f"condition {index + 1}", "reload", values[-1]))
    return _assembled(ops + [f"condition {len(conditions)}", (_RET_K, None, None, _ERRNO | _EPERM),
                             "reload", (_LD_W_ABS, None, None, _NR)])


def _sockets_the_kernel_has(socket: int, socketpair: int) -> Program:
    """Instructions that let socket and socketpair make only the kinds of socket every kernel
    has built in: Unix sockets, IP's streams over TCP and datagrams over UDP (or the type's
    default protocol, over IPv4 or IPv6), and the routing netlink that glibc asks for
    interfaces; any other family is answered EAFNOSUPPORT, any other type, protocol or pairing
    of the two EPROTONOSUPPORT, as a kernel without them would. A kernel asked for a family,
    or a type and protocol, it has not loaded starts modprobe, as root, outside every sandbox,
    for each such call: code that asked in a loop would load the machine for its classmates at
    no cost of its own (it waits asleep). The call's number loaded; every path returns."""
    protocol = _ARG0 + 16
    return _assembled([
        (_JEQ_K, "family", None, socket), (_JEQ_K, "family", "end", socketpair),
        "family", (_LD_W_ABS, None, None, _ARG0),
        (_JEQ_K, "allow", None, _AF_UNIX), (_JEQ_K, "ip", None, _AF_INET),
        (_JEQ_K, "ip", None, _AF_INET6), (_JEQ_K, "netlink", None, _AF_NETLINK),
        (_RET_K, None, None, _ERRNO | _EAFNOSUPPORT),
        "ip", (_LD_W_ABS, None, None, _ARG1), (_ALU_AND_K, None, None, _SOCK_TYPE_MASK),
        (_JEQ_K, "stream", None, _SOCK_STREAM), (_JEQ_K, "datagram", "refused", _SOCK_DGRAM),
        "stream", (_LD_W_ABS, None, None, protocol), (_JEQ_K, "allow", None, 0),
        (_JEQ_K, "allow", "refused", _IPPROTO_TCP),
        "datagram", (_LD_W_ABS, None, None, protocol), (_JEQ_K, "allow", None, 0),
        (_JEQ_K, "allow", "refused", _IPPROTO_UDP),
        "netlink", (_LD_W_ABS, None, None, protocol),
        (_JEQ_K, "allow", "refused", _NETLINK_ROUTE),
        "refused", (_RET_K, None, None, _ERRNO | _EPROTONOSUPPORT),
        "allow", (_RET_K, None, None, _ALLOW),
        "end"])


def _holds_program(arch: int, clone: int, clone3: int, unshare: int, fcntl: int,
                   setrlimit: int, prlimit64: int, socket: int, socketpair: int,
                   refused: list[int], screened: Program | None = None) -> Program:
    """The filter on machine-wide holds: the `refused` calls refused, the `screened` calls'
    instructions (_refused_with's, _own_only's) run in turn, clone3 answered ENOSYS (its flags
    are out of a filter's sight; glibc then falls back to clone), fcntl refused F_SETLEASE and
    F_SETPIPE_SZ (pipe buffers count against a per-user quota, and every sandbox is one user
    outside: one submission's large pipes left a classmate's new ones a page each), clone and
    unshare refused with any CLONE_NEW* flag, unshare with CLONE_FILES, and clone of a thread
    without it; every change of RLIMIT_CORE (_core_limit_kept); and sockets of a kind the
    kernel may have to load (_sockets_the_kernel_has)."""
    deny, no_such = _ERRNO | _EPERM, _ERRNO | _ENOSYS
    return _this_abi(arch) + _refusing(refused) + _core_limit_kept(setrlimit, prlimit64) + \
        _sockets_the_kernel_has(socket, socketpair) + (screened or []) + [
        (_JEQ_K, 0, 1, clone3), (_RET_K, 0, 0, no_such),
        (_JEQ_K, 0, 5, fcntl), (_LD_W_ABS, 0, 0, _ARG1), (_JEQ_K, 1, 0, _F_SETLEASE),
        (_JEQ_K, 0, 1, _F_SETPIPE_SZ), (_RET_K, 0, 0, deny), (_RET_K, 0, 0, _ALLOW),
        (_JEQ_K, 0, 4, clone), (_LD_W_ABS, 0, 0, _ARG0), (_JSET_K, 5, 0, _CLONE_NEW),
        (_ALU_AND_K, 0, 0, _CLONE_THREAD | _CLONE_FILES), (_JEQ_K, 3, 4, _CLONE_THREAD),
        (_JEQ_K, 0, 3, unshare), (_LD_W_ABS, 0, 0, _ARG0),
        (_JSET_K, 0, 1, _CLONE_NEW | _CLONE_FILES), (_RET_K, 0, 0, deny),
        (_RET_K, 0, 0, _ALLOW)]


def forbid_new_processes(threads: bool = True) -> bool:
    """Install the filter in this process (with `threads` False, no new thread either):
    whether it is in place (False on a machine whose architecture or kernel offers no such
    filter; the sandbox's task cap is then the guard)."""
    numbers = _SYSCALLS.get(platform.machine())
    return numbers is not None and _install(_program(*numbers, threads=threads))


def forbid_machine_wide_holds() -> bool:
    """Install the filter on machine-wide holds in this process: whether it is in place (False
    on a machine whose architecture or kernel offers no such filter)."""
    machine = platform.machine()
    if machine not in _SYSCALLS:
        return False
    arch, _, _, clone, clone3 = _SYSCALLS[machine]
    refused = [numbers[machine] for numbers in REFUSED.values() if machine in numbers]
    me = os.getpid()
    screened = [op for numbers, conditions in REFUSED_WITH.values() if machine in numbers
                for op in _refused_with(numbers[machine], conditions)]
    screened += [op for numbers, allowed in OWN_ONLY.values() if machine in numbers
                 for op in _own_only(numbers[machine], tuple(
                     (argument, tuple(me if v == _SELF else v for v in values))
                     for argument, values in allowed))]
    if not _install(_holds_program(arch, clone, clone3, *_SCREENED_CALLS[machine], refused,
                                   screened)):
        return False
    _poll_where_epoll_is_refused()
    return True


CAP_SYS_PTRACE = 19
_LINUX_CAPABILITY_VERSION_3 = 0x20080522
_CAPGET, _CAPSET = {"x86_64": (125, 126), "aarch64": (90, 91)}.get(platform.machine(), (0, 0))


def drop_ptrace_capability() -> bool:
    """Drop CAP_SYS_PTRACE from this process (its effective, permitted and inheritable sets):
    whether it is gone (True where it never was). Run as root, code under test would keep it,
    and with it open /proc/<pid>/mem and environ of the worker and the command, undumpable or
    not (no filter sees which file an open names); without it, undumpable is enough."""
    if not _CAPGET:
        return False
    libc = ctypes.CDLL(None, use_errno=True)
    header = (ctypes.c_uint32 * 2)(_LINUX_CAPABILITY_VERSION_3, 0)
    data = (ctypes.c_uint32 * 6)()  # two of {effective, permitted, inheritable}
    if libc.syscall(_CAPGET, header, data) != 0:
        return False
    if not any(word & (1 << CAP_SYS_PTRACE) for word in data[:3]):
        return True
    for index in range(3):
        data[index] &= ~(1 << CAP_SYS_PTRACE) & 0xFFFFFFFF
    return bool(libc.syscall(_CAPSET, header, data) == 0)


def _poll_where_epoll_is_refused() -> None:
    """Point Python's default selector at poll where the process imported `selectors` before
    the filter (subprocess does): it chose epoll then, and asyncio's event loop, or anything
    else that asks for the default selector, would fail where the same code imported fresh
    gets poll (selectors probes epoll at import)."""
    selectors = sys.modules.get("selectors")
    if selectors is not None and hasattr(selectors, "PollSelector"):
        vars(selectors)["DefaultSelector"] = selectors.PollSelector


def _install(program: Program) -> bool:
    """Install `program` in this process and whatever it starts from now on (no new
    privileges first, as seccomp asks of a process without them): whether it is in place."""
    code = b"".join(struct.pack("HBBI", *op) for op in program)
    buffer = ctypes.create_string_buffer(code, len(code))
    fprog = struct.pack("HxxxxxxP", len(program), ctypes.addressof(buffer))
    fprog_buffer = ctypes.create_string_buffer(fprog, len(fprog))
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong,
                           ctypes.c_ulong]
    if libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        return False
    installed: int = libc.prctl(_PR_SET_SECCOMP, _SECCOMP_MODE_FILTER,
                                ctypes.addressof(fprog_buffer), 0, 0)
    return installed == 0
