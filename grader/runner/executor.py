"""The process inside a sandbox: it forks the children that run candidate code, on the judge's
word, and reports how each ended.

One executor serves one submission. It is started by grader.runner.sandbox inside bubblewrap,
with one end of a Unix socket as its only line out:

    python -P -m grader.runner.executor FD ROUND_FOLDER

It imports numpy, torch and the round's probe helpers once, then
answers the judge's messages (grader.runner.channel):

    {"op": "start", "spec": ChildSpec} + a pipe's write end fork a child that runs the spec,
      and one end of a socket                                writes its frames to the pipe and
                                                             receives its calls' arguments on
                                                             the socket (from the judge, unseen
                                                             here); where the machine gives no
                                                             process for it, a "setup_failed"
                                                             frame in its place
    {"op": "last_words"}                                     ask the child what it printed
    {"op": "usage"}                                          answer {"op": "usage", "cpu_s",
                                                             "runnable"}: the child's tree's
                                                             CPU time and whether it runs
    {"op": "end", "kill": bool}                              reap it (killed first if asked),
                                                             kill whatever it left, empty
                                                             /tmp, /dev/shm and System V's
                                                             shared memory, queues and
                                                             semaphores, answer
                                                             {"op": "ended", "how", "cpu_s"}

It reads no candidate output and judges nothing: the frames go straight from the child to the
judge. It makes itself undumpable, so the code under test (same user, same namespace) can
neither trace it nor open its /proc entries, and adopts every orphan so that nothing a child
starts outlives that child.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import resource
import socket
import stat
import sys
from pathlib import Path
from types import ModuleType

from grader.engine.rounds import Round
from grader.runner import strays
from grader.runner.channel import ChannelClosed, receive, send
from grader.runner.child import cap_per_user_counts, ready_for, run_child
from grader.runner.children import ended_by_itself, probe_helpers, ready_to_fork
from grader.runner.protocol import LAST_WORDS_SIGNAL, ChildSpec, write_frame
from grader.runner.sandbox import MQUEUE, TASKS, WRITABLE


def serve(sock: socket.socket, round_folder: str) -> None:
    strays.set_dumpable(False)
    strays.become_subreaper()
    # Counted per user namespace: this caps the sandbox's processes and threads, whoever
    # started the grader.
    resource.setrlimit(resource.RLIMIT_NPROC, (TASKS, TASKS))
    # Signals its children queue to it are counted with theirs (see PER_USER_CAPS).
    cap_per_user_counts()
    strays.keep_limits()
    helpers = prepare(round_folder)
    made = {folder: stat.S_IMODE(os.stat(folder).st_mode) for folder in WRITABLE}
    send(sock, {"op": "ready"})
    child = 0
    while True:
        try:
            message, fds = receive(sock)
        except ChannelClosed:
            return
        op = message.get("op")
        if op == "start" and len(fds) == 2:
            child = _start(sock, message["spec"], fds, helpers)
        elif op == "last_words" and child:
            try:
                os.kill(child, LAST_WORDS_SIGNAL)
            except ProcessLookupError:
                pass
        elif op == "usage":
            found = strays.work_usage(child) if child else None
            send(sock, {"op": "usage", "cpu_s": found.cpu_s if found else None,
                        "runnable": bool(found and found.runnable)})
        elif op == "end" and child:
            kill = bool(message.get("kill")) or not ended_by_itself(child)
            how, cpu_s, _ = strays.reap(child, kill)
            child = 0
            _wipe(made)
            _wipe_ipc()
            send(sock, {"op": "ended", "how": how, "cpu_s": cpu_s})
        elif op == "end":  # a child the machine gave no process (see _start)
            send(sock, {"op": "ended", "how": strays.NEVER_FORKED, "cpu_s": 0.0})
        for fd in fds:
            os.close(fd)


def prepare(round_folder: str) -> ModuleType:
    """Load what every child uses, once, before the first is forked (ready_to_fork, as the
    worker does): the round's probe helpers."""
    ready_to_fork()
    return probe_helpers(Round.load(Path(round_folder)))


IPC_RMID = 0
_KEYCTL = {"x86_64": 250, "aarch64": 219}.get(os.uname().machine, -1)
"""keyctl's system call number (-1 where unknown: the call fails, ENOSYS, and nothing is
cleared)."""
SYSV_IPC = ("shm", "msg", "sem")
"""System V's kinds of kept memory: shared memory segments, message queues, semaphore sets."""


KEYRINGS = (-3, -4, -5)
"""The session, user and user-session keyrings (KEY_SPEC_*): a key added to one outlives the
process that added it, and the next child, the same user in the same namespace, would read it.
So does the user's persistent keyring, found by its own call (KEYCTL_GET_PERSISTENT)."""
KEYCTL_CLEAR = 7
KEYCTL_GET_PERSISTENT = 22
THREAD_KEYRING = -1


def _wipe_ipc() -> None:
    """Remove every System V shared memory segment, message queue and semaphore set in the
    sandbox's IPC namespace (its own: bwrap's --unshare-all), every POSIX message queue, and
    every key in the keyrings the children share: like a file in /tmp, each outlives the
    process that made it, and the next child would find it."""
    for queue in Path(MQUEUE).iterdir() if Path(MQUEUE).is_dir() else ():
        try:
            queue.unlink()
        except OSError:
            pass
    try:
        libc = ctypes.CDLL(None, use_errno=True)
    except OSError:
        return
    # Linked into this thread's own keyring, which no child inherits; -1 where the kernel
    # keeps no persistent keyrings (clearing -1 then fails, EINVAL, and changes nothing).
    persistent = libc.syscall(_KEYCTL, KEYCTL_GET_PERSISTENT, -1, THREAD_KEYRING)
    for keyring in (*KEYRINGS, persistent):
        libc.syscall(_KEYCTL, KEYCTL_CLEAR, keyring)
    for kind in SYSV_IPC:
        try:
            rows = Path(f"/proc/sysvipc/{kind}").read_text().splitlines()[1:]
        except OSError:
            continue
        for row in rows:
            ident = int(row.split()[1])
            if kind == "sem":
                libc.semctl(ident, 0, IPC_RMID)
            else:
                getattr(libc, f"{kind}ctl")(ident, IPC_RMID, None)


def _wipe(folders: dict[str, int]) -> None:
    """Empty the sandbox's writable places once a child is gone: each child starts with
    nothing an earlier one wrote (an answer kept in a file, say, for a measured process).
    A folder the child made unwritable or unreadable (its own: the same user) is opened up
    first, so that nothing it holds survives; the folder itself is put back as it was made
    (_as_made): its mode, times and extended attributes could carry a message too."""
    for folder, mode in folders.items():
        _as_made(folder, mode)
        try:
            _empty(folder)
        except OSError:
            pass  # what cannot be removed stays; the sandbox dies with the submission


def _empty(folder: str) -> None:
    """Remove everything below `folder`, whatever its depth and whatever modes the child set:
    a walk that goes down one folder at a time (each opened up first: made its owner's to
    read, write and search), removes the files of each folder it enters, and on the way back
    up (through `..`) removes each folder it emptied. It holds one folder open and names none
    by a path longer than one name, so neither a tree thousands of folders deep nor paths
    longer than the system allows stop it (shutil.rmtree recurses once per level)."""
    here = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    left = [_files_removed(here)]  # per folder from `folder` down to `here`: folders to enter
    below: list[str] = []  # the names walked down from `folder` to `here`
    try:
        while True:
            if left[-1]:
                inner = left[-1].pop()
                try:
                    os.chmod(inner, 0o700, dir_fd=here)
                    down = os.open(inner, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW,
                                   dir_fd=here)
                except OSError:
                    continue  # what cannot be entered stays; the rest is still removed
                os.close(here)
                here = down
                below.append(inner)
                left.append(_files_removed(here))
                continue
            left.pop()
            if not below:
                return
            up = os.open("..", os.O_RDONLY | os.O_DIRECTORY, dir_fd=here)
            os.close(here)
            here = up
            with contextlib.suppress(OSError):  # a folder something stayed in
                os.rmdir(below.pop(), dir_fd=here)
    finally:
        os.close(here)


def _files_removed(folder: int) -> list[str]:
    """Remove every entry of the open folder that is not a folder (links are not followed):
    the names of the folders it holds."""
    inner = []
    for entry in list(os.scandir(folder)):
        if entry.is_dir(follow_symlinks=False):
            inner.append(entry.name)
        else:
            with contextlib.suppress(OSError):  # what cannot be removed stays, alone
                os.unlink(entry.name, dir_fd=folder)
    return inner


def _as_made(folder: str, mode: int) -> None:
    """The folder's own mode (as the sandbox made it), times and extended attributes reset: a
    child can set each on a place it may write (`chmod`, `utime`, `setxattr` on /tmp itself),
    and the next child could read them."""
    try:
        os.chmod(folder, mode)
        for name in os.listxattr(folder):
            os.removexattr(folder, name)
        os.utime(folder, ns=(0, 0))
    except OSError:
        pass  # what cannot be reset stays; the sandbox dies with the submission


def _start(sock: socket.socket, spec: ChildSpec, fds: list[int],
           helpers: ModuleType) -> int:
    frames, orders = fds
    if strays.strays_left():
        # The code's processes outlived the sweep and could end the next child before its
        # setup: the sandbox is given up (the worker reports the rest as the code's doing).
        raise SystemExit("processes the code under test left behind outlived the sweep")
    ready_for(spec)
    try:
        pid = strays.fork()
    except strays.NoProcessLeft as exc:
        if exc.by_the_code:
            raise SystemExit(str(exc)) from None
        # The machine's table stayed full, and nothing of the code's is left here: the child's
        # check is the machine's, said in its place as a setup that failed, and the sandbox
        # lives on for the next.
        write_frame(frames, {"kind": "setup_failed", "message": str(exc)})
        return 0
    if pid == 0:
        sock.close()
        run_child(frames, orders, spec, helpers, os.getppid())
    return pid


def main(argv: list[str]) -> None:
    fd, round_folder = argv
    serve(socket.socket(fileno=int(fd)), round_folder)


if __name__ == "__main__":
    main(sys.argv[1:])
