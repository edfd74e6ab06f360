"""The sandbox: one submission's code runs in bubblewrap, where it cannot see the judge.

A sandbox is one `bwrap` process tree per submission (`grade`, Gradescope, `check --sandbox`):

- namespaces of its own for users, PIDs, network, IPC, UTS and cgroups (`--unshare-all`), as
  nobody (uid 65534) inside, with no capabilities and no network, and no user namespace it can
  make itself (`--disable-userns`, where bwrap has it), so no namespace of any kind;
- a root of its own made of read-only binds: the system's /usr (and /bin, /lib...), the Python
  installation, the grader package with every reference folder covered by an empty tmpfs, and
  the submission's own files; /tmp is a private tmpfs capped at TMP_MB; /proc is the sandbox's
  own; /dev holds only the harmless devices. Not the coach's home, not another submission, not
  the judge's environment (`--clearenv`), files, pipes or /proc entries;
- memory and process count capped for the sandbox as a whole: in a cgroup of its own where one
  can be made (cgroup v2, else v1), and always RLIMIT_NPROC, which Linux counts per user
  namespace, so it caps this sandbox alone (except where the grader runs as root: nobody then
  maps to root outside, which Linux exempts, and the cgroup's limit on tasks is the cap); the
  per-process address-space cap still applies;
- it dies with everything it started: `--die-with-parent`, and killing bwrap ends its PID
  namespace, whose every process the kernel then kills.

Inside runs grader.runner.executor, which forks one child per ChildSpec. The judge (the worker
that owns the sandbox) passes each child a pipe and a socket of its own making, reads the child's
frames from the pipe as it would from a child it forked itself, sends each call's arguments on
the socket when it releases that call (the executor never sees them), and hears how the child
ended over a socket of the executor's; it believes nothing else a sandbox says.
"""

from __future__ import annotations

import errno
import functools
import importlib.util
import itertools
import math
import os
import re
import select
import shutil
import signal
import site
import socket
import subprocess
import sys
import sysconfig
import tempfile
import time
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal

import grader
from grader.engine.results import SHORT_OF_MEMORY, TOO_BUSY
from grader.engine.rounds import Round, installed
from grader.runner import memory, strays
from grader.runner.channel import ChannelClosed, receive, send
from grader.runner.children import (
    BACKSTOP,
    Children,
    ChildrenLost,
    Ended,
    Orders,
    Setup,
    Spawn,
    TreeWatch,
    ask_last_words,
    wait_readable,
)
from grader.runner.process_env import grading_environment
from grader.runner.protocol import ChildJob, FrameTimeout, Request

NOBODY = 65534
TMP_MB = 64
MQUEUE = "/dev/mqueue"
"""Where a sandbox mounts its IPC namespace's POSIX message queues (bwrap's --mqueue), so that
its executor can list and remove them once each child ends."""
WRITABLE = ("/tmp", "/dev/shm")
"""The only writable places in a sandbox, each a private tmpfs of TMP_MB (after /dev, whose
/dev/shm bwrap would otherwise leave unbounded)."""
EXECUTOR_MB = 1536
"""Memory for the executor itself (torch, numpy, the probe helpers), on top of the request's."""
TASKS = 256
"""Processes and threads a sandbox may have at once."""
START_LIMIT_S = 60.0
"""How much work a starting sandbox may do before its executor says it is ready (it imports
torch: a second or two), and how long it may sit idle; the clock alone stops the wait only at
BACKSTOP times that, so a machine too busy to give it a CPU slows the start but never fails
it."""
START_WORDS = {
    "cpu": "its executor used {limit:g} s of CPU without getting ready",
    "idle": "its executor sat idle for {limit:g} s without getting ready",
    "wall": "its executor got too little CPU to be ready within {backstop:g} s on the clock",
    "clock": "its executor was not ready after {limit:g} s on the clock",
}
READY_READ_S = 30.0
"""How long the ready message, once it has begun to arrive, may take to arrive whole."""
USAGE_TIMEOUT_S = 2.0
END_LIMIT_S = strays.SWEEP_LIMIT_S + 2.0
"""How much work (CPU time or sleep of the sandbox's processes: the child dying, the executor
sweeping what it left) ending a child may take before the sandbox counts as wedged; the clock
alone stops the wait only at BACKSTOP times that, and then the machine was too busy."""
END_WORDS = "its executor got too little CPU to end a child within {backstop:g} s on the clock"
STOPPED_POLL_S = 0.05
"""How often a wait for the executor's answer looks whether the executor was stopped (and
continues it)."""
LOST = ("its sandbox stopped answering (the code under test killed the process that runs "
        "it, lowered its limits or left processes it could not end) and was killed; the rest "
        "of this submission was not run")
LOST_FOR_MEMORY = ("its sandbox stopped answering while the kernel's out-of-memory killer was "
                   "at work (the memory of the sandbox, its container or the machine ran out) "
                   "and was killed; the rest of this submission was not run")
"""LOST, where the kernel counted an out-of-memory kill since the sandbox started (of one of
the sandbox's processes, where its cgroup counts them) and the sandbox's own memory ran out,
or where whose memory ran out cannot be told (no cgroup): code past the sandbox's cap is rightly
an error. Where only the container's or the machine's ran out: LOST_TO_THE_MACHINE."""
LOST_TO_THE_MACHINE = (f"not run: {SHORT_OF_MEMORY} (the kernel's out-of-memory killer was at "
                       "work, and the sandbox's own memory was not full)")
"""LOST_FOR_MEMORY where the sandbox's own memory limit was never reached: the memory that ran
out was its container's or the machine's, and the checks not run are undecided."""
_LOST_CHILD = {LOST: "was lost with its sandbox, which stopped answering and was killed",
               LOST_FOR_MEMORY: "was lost with its sandbox, which stopped answering while the "
                                "kernel's out-of-memory killer was at work, and was killed",
               LOST_TO_THE_MACHINE: "was lost with its sandbox, which stopped answering while "
                                    "the kernel's out-of-memory killer was at work"}
"""How the child running when its sandbox was lost ended, by what the checks not run say."""
_HOW = re.compile(r"(exited with code -?\d{1,3}|killed by signal [A-Z0-9]{2,10}|"
                  + re.escape(strays.OUT_OF_MEMORY) + "|" + re.escape(strays.NEVER_FORKED) + ")")
"""Every way an executor says a child ended (strays.reap's words, or NEVER_FORKED for one it
could not fork): an answer that is none of them is malformed."""


class SandboxError(Exception):
    """No sandbox could be made here, or one would not start; the message says why."""


class SandboxStarved(SandboxError):
    """A sandbox still starting when the clock's backstop ran out, having used neither its
    CPU time nor its idle allowance: the machine gave it too little CPU (see Sandboxes)."""


# --- what the machine allows --------------------------------------------------------------------


CgroupKind = Literal["v2", "v1"]


@dataclass(frozen=True)
class Support:
    """What this machine offers a sandbox, found by trying (see `support`)."""

    bwrap: str | None
    usable: bool
    why: str
    cgroup: CgroupKind | None
    cgroup_why: str
    cpu_share: bool = False
    """Whether a sandbox's cgroup gets a CPU share of its own (see Cgroup)."""


@functools.cache
def support() -> Support:
    """Whether bubblewrap is installed and can make a sandbox here (user namespaces allowed),
    and which cgroups this process may create. Tried once per process: a real bwrap run, and a
    real cgroup made and removed."""
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        return Support(None, False, "bubblewrap is not installed (Debian/Ubuntu: apt-get install "
                       "bubblewrap)", None, "")

    def try_once() -> subprocess.CompletedProcess[str]:
        done = subprocess.run([bwrap, *_namespace_args(bwrap), *_system_args(), "/bin/true"],
                              capture_output=True, text=True, timeout=30)
        if done.returncode != 0 and strays.machine_short(done.stderr):
            raise BlockingIOError(errno.EAGAIN, done.stderr.strip())
        return done

    # A process table, or a file table, full for a moment says nothing of this machine's
    # sandboxes, and is not an answer to keep (NoProcessLeft is raised, not cached).
    done = strays.retried(try_once)
    if done.returncode != 0:
        why = done.stderr.strip().splitlines()[-1:] or [f"exit status {done.returncode}"]
        return Support(bwrap, False, f"bwrap cannot make a sandbox here: {why[0]} (are "
                       "unprivileged user namespaces disabled?)", None, "")
    try:
        probe = Cgroup.make(f"grader-probe-{os.getpid()}", 64 << 20, 8)
    except SandboxError as exc:
        return Support(bwrap, True, "", None, str(exc))
    shares = probe.shares_cpu
    probe.remove()
    return Support(bwrap, True, "", probe.kind, "", shares)


def ensure_usable() -> None:
    """SandboxError, saying why, where no sandbox can be made here."""
    found = support()
    if not found.usable:
        raise SandboxError(found.why)


def _namespace_args(bwrap: str) -> list[str]:
    return ["--unshare-all", *_closing_user_namespaces(bwrap), "--die-with-parent",
            "--new-session", "--uid", str(NOBODY), "--gid", str(NOBODY)]


@functools.cache
def _options(bwrap: str) -> str:
    """This bubblewrap's own list of its options (`--help`); empty where it cannot say."""
    try:
        done = subprocess.run([bwrap, "--help"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return ""
    return done.stdout + done.stderr


def _closing_user_namespaces(bwrap: str) -> tuple[str, ...]:
    """`--disable-userns` where this bubblewrap has it (0.8 and later): code in the sandbox
    then cannot make a user namespace of its own, and with it the namespaces (UTS, network,
    more users) every sandbox is made of, which the machine counts per user: a submission that
    took them all would leave no sandbox for a classmate graded beside it."""
    return ("--unshare-user", "--disable-userns") if "--disable-userns" in _options(bwrap) \
        else ()


def _executor_first(bwrap: str) -> tuple[str, ...]:
    """`--as-pid-1` where this bubblewrap has it (0.5 and later): the executor, undumpable, is
    the sandbox's first process, where bwrap's own would be open to the code (its files, its
    memory: a store that outlives each child), and ignores the signals code sends it."""
    return ("--as-pid-1",) if "--as-pid-1" in _options(bwrap) else ()


def _system_args() -> list[str]:
    """The read-only system: /usr and the top-level folders that programs find libraries and
    tools in (kept as symlinks where the system has them so), and the dynamic loader's cache."""
    args = ["--ro-bind", "/usr", "/usr"]
    for top in ("/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"):
        path = Path(top)
        if path.is_symlink():
            args += ["--symlink", os.readlink(path), top]
        elif path.is_dir():
            args += ["--ro-bind", top, top]
    for name in ("/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/localtime"):
        if Path(name).exists():
            args += ["--ro-bind", name, name]
    return args + ["--proc", "/proc", *_global_proc_args(), "--dev", "/dev", "--mqueue", MQUEUE]


@functools.cache
def _global_proc_args() -> tuple[str, ...]:
    """Every entry of /proc that is the machine's, not a process's (sys, sysrq-trigger, irq,
    ...), bound read-only over the sandbox's own /proc. Where grader runs as root, bwrap maps
    the sandbox's user to root outside, and the kernel lets root write the files it owns
    there (a sysctl such as kernel.core_pattern: a program the kernel runs as root) with no
    capability; bwrap makes /proc/sys read-only only where its folder looks writable, which a
    0555 folder does not. The processes' own folders, and the links to them, stay as they
    are. Listed once per process: the machine's entries are the kernel's, and /proc holds a
    folder for every process of the machine besides."""
    return tuple(arg for name in sorted(os.listdir("/proc"))
                 if not name.isdigit() and not os.path.islink(f"/proc/{name}")
                 for arg in ("--ro-bind-try", f"/proc/{name}", f"/proc/{name}"))


# --- cgroups ----------------------------------------------------------------------------------


_names = itertools.count()


@dataclass
class Cgroup:
    """A cgroup made for one sandbox, with memory and task limits, in each hierarchy it needs,
    and a CPU share of its own where the cpu controller is there: the scheduler then weighs the
    whole sandbox as it weighs one process, so code that starts a hundred spinning processes
    takes no more of the CPU from the grader's own processes, from another submission's
    sandbox or from the rest of the machine than one process would.

    cgroup v2: one folder below this process's own cgroup, which must delegate the memory and
    pids controllers (and, for the share, cpu). v1: one folder in each of the memory and pids
    hierarchies, and in the cpu hierarchy where it is mounted."""

    kind: CgroupKind
    folders: list[Path] = field(default_factory=list)

    @classmethod
    def make(cls, name: str, memory_bytes: int, tasks: int) -> Cgroup:
        """The cgroup, or SandboxError saying why none can be made here."""
        v2 = Path("/sys/fs/cgroup/cgroup.controllers")
        own = _own_cgroups()
        if v2.exists() and "" in own:
            group = cls("v2")
            base = Path("/sys/fs/cgroup") / own[""].lstrip("/")
            group._create(base / name, {"memory.max": memory_bytes, "memory.swap.max": 0,
                                        "pids.max": tasks})
            return group
        if "memory" in own and "pids" in own:
            group = cls("v1")
            group._create(Path("/sys/fs/cgroup/memory") / own["memory"].lstrip("/") / name,
                          {"memory.limit_in_bytes": memory_bytes,
                           "memory.memsw.limit_in_bytes": memory_bytes})
            group._create(Path("/sys/fs/cgroup/pids") / own["pids"].lstrip("/") / name,
                          {"pids.max": tasks})
            for controller in ("cpu", "cpuacct"):
                hierarchy = Path("/sys/fs/cgroup") / controller
                # Mounted together ("cpu,cpuacct"), both name one folder: made once.
                folder = hierarchy.resolve() / own.get(controller, "").lstrip("/") / name
                if controller in own and hierarchy.is_dir() and folder not in group.folders:
                    group._optional(folder)
            return group
        raise SandboxError("no cgroup hierarchy with the memory and pids controllers")

    def _create(self, folder: Path, limits: dict[str, int]) -> None:
        _remove_stale(folder.parent)
        try:
            folder.mkdir()
        except OSError as exc:
            self.remove()
            raise SandboxError(f"cannot make a cgroup at {folder}: {exc.strerror}") from exc
        self.folders.append(folder)
        for name, value in limits.items():
            target = folder / name
            if name.startswith(("memory.swap", "memory.memsw")) and not target.exists():
                continue  # no swap accounting here: nothing to cap
            try:
                target.write_text(str(value))
            except OSError as exc:
                self.remove()
                raise SandboxError(f"cannot set {target}: {exc.strerror}") from exc

    def _optional(self, folder: Path) -> None:
        """A folder in the cpu hierarchy (at the default share: one process's) or the cpuacct
        one (counting the CPU time of all its processes); none where it cannot be made: the
        memory and task limits do not depend on it."""
        _remove_stale(folder.parent)
        try:
            folder.mkdir()
        except OSError:
            return
        self.folders.append(folder)

    def cpu_s(self) -> float | None:
        """The CPU seconds all its processes have used, live, reaped or reaped by nobody
        (v2's cpu.stat, v1's cpuacct.usage); None where no folder counts them."""
        for folder in self.folders:
            try:
                if self.kind == "v2":
                    stat = (folder / "cpu.stat").read_text().split()
                    return int(stat[stat.index("usage_usec") + 1]) / 1e6
                if (folder / "cpuacct.usage").exists():
                    return int((folder / "cpuacct.usage").read_text()) / 1e9
            except (OSError, ValueError, IndexError):
                return None
        return None

    @property
    def shares_cpu(self) -> bool:
        """Whether one of its folders carries a CPU weight (cpu.shares in v1, cpu.weight in v2)."""
        return any((f / "cpu.shares").exists() or (f / "cpu.weight").exists()
                   for f in self.folders)

    def memory_full(self) -> int | None:
        """How often its memory ran out at its own limit (memory.limit_reached); None where
        the kernel does not say."""
        counts = [c for folder in self.folders if (c := memory.limit_reached(folder)) is not None]
        return sum(counts) if counts else None

    def memory_kills(self) -> int | None:
        """How many of its processes the out-of-memory killer ended (memory.kills_in); None
        where the kernel does not say."""
        counts = [c for folder in self.folders if (c := memory.kills_in(folder)) is not None]
        return sum(counts) if counts else None

    def reset_memory_marks(self) -> None:
        """memory.reset_marks, as one of its children begins."""
        for folder in self.folders:
            memory.reset_marks(folder)

    @property
    def procs(self) -> list[str]:
        return [str(folder / "cgroup.procs") for folder in self.folders]

    def remove(self) -> None:
        """Remove the folders once their processes are gone (the kernel lets go of a dead
        sandbox's tasks within moments)."""
        for folder in reversed(self.folders):
            deadline = time.monotonic() + 2.0
            while True:
                try:
                    folder.rmdir()
                    break
                except FileNotFoundError:
                    break
                except OSError:
                    if time.monotonic() > deadline:
                        break
                    time.sleep(0.01)
        self.folders.clear()


def _remove_stale(parent: Path) -> None:
    """Remove the empty cgroups of grading processes that are gone (killed before they could
    remove their own): grader-<pid>-<n>, whose <pid> is no longer alive."""
    for folder in parent.glob("grader-*-*"):
        pid = folder.name.split("-")[1]
        if pid.isdigit() and not Path(f"/proc/{pid}").exists():
            try:
                folder.rmdir()
            except OSError:
                pass


def _own_cgroups() -> dict[str, str]:
    """This process's cgroup path by controller ("" for the v2 hierarchy)."""
    found: dict[str, str] = {}
    try:
        lines = Path("/proc/self/cgroup").read_text().splitlines()
    except OSError:
        return found
    for line in lines:
        _, controllers, path = line.split(":", 2)
        for controller in controllers.split(",") if controllers else [""]:
            found[controller] = path
    return found


# --- the sandbox's view of the files --------------------------------------------------------------


def _python_roots() -> list[Path]:
    """The folders the interpreter and its installed packages live in, outermost only."""
    sites = _site_folders()
    paths = {sys.base_prefix, sys.prefix, sys.exec_prefix, *sites, *_pth_folders(sites)}
    roots: list[Path] = []
    for path in sorted({Path(p).resolve() for p in paths if Path(p).exists()}, key=str):
        if not any(path.is_relative_to(root) for root in [*roots, Path("/usr")]):
            roots.append(path)
    return roots


def _site_folders() -> set[str]:
    folders = {sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"],
               *site.getsitepackages()}
    if site.ENABLE_USER_SITE:
        folders.add(site.getusersitepackages())
    return folders


PACKAGE_FOLDERS = ("site-packages", "dist-packages")
"""The names of the folders an environment installs its packages into."""


def _pth_folders(sites: set[str]) -> set[str]:
    """The folders that the site folders' .pth files add to sys.path, as `site` reads them (a
    line that is not a comment nor an `import` names a folder, relative to the .pth's own). A
    venv that reaches another environment's packages does it so, and the interpreter in the
    sandbox reads the same files: without these folders bound, numpy or torch would be missing
    there, or hidden by the sandbox's /tmp when the environment lies under /tmp. Only another
    environment's package folders (site-packages, dist-packages) are bound: a line naming
    anything else (an editable install's checkout, this grader's among them, or a home folder a
    .pth file was made to name) could show the sandbox what it must not see."""
    found: set[str] = set()
    for site_folder in sites:
        for pth in sorted(Path(site_folder).glob("*.pth")):
            try:
                lines = pth.read_text(errors="replace").splitlines()
            except OSError:
                continue
            for line in (line.strip() for line in lines):
                if not line or line.startswith(("#", "import ", "import\t")):
                    continue
                folder = (Path(site_folder) / line).resolve()
                if folder.is_dir() and folder.name in PACKAGE_FOLDERS:
                    found.add(str(folder))
    return found


def _reference_folders() -> set[Path]:
    """Every folder that holds references: of every round this process knows, and whatever an
    install of grader (this one or another, an editable install's leftovers included) bundled
    into site-packages."""
    from grader.engine.bundle import BundleError, bundled_path

    found = {(Path(folder) / "grader" / "_bundled").resolve() for folder in _site_folders()
             if (Path(folder) / "grader" / "_bundled").is_dir()}
    try:
        found.add(bundled_path("reference").resolve())
    except BundleError:
        pass
    for round_ in installed().values():
        for flavor in round_.flavors:
            folder = round_.reference_dir(flavor)
            if folder.is_dir():
                found.add(folder.resolve())
    return found


CANDIDATE_SIDE = ("__init__.py", "engine/__init__.py", "engine/results.py", "engine/safe_text.py",
                  "engine/documents.py", "engine/secret.py", "engine/limits.py",
                  "engine/shapes.py", "engine/timing.py", "engine/rounds.py",
                  "engine/flavored.py", "engine/python_source.py", "probes/*.py",
                  "runner/__init__.py", "runner/channel.py",
                  "runner/child.py", "runner/children.py", "runner/executor.py",
                  "runner/memory.py", "runner/nofork.py", "runner/process_env.py",
                  "runner/protocol.py",
                  "runner/sandbox.py", "runner/strays.py",
                  "round_api/__init__.py", "round_api/probes.py")
"""The grader's modules that the executor and the probes import: all of the package that a
sandbox shows. Nothing of the judge (check kinds, truths, mistake simulators, references,
commands) is among them, so candidate code cannot import, read or call it: a judge module added
later is hidden unless it is named here. Each round adds its `candidate_files`."""


def candidate_files(round_: Round) -> list[Path]:
    """Every file of the grader a sandbox for `round_` shows: the package's candidate side,
    their compiled files where present, and the round's own candidate files."""
    package = Path(grader.__file__).resolve().parent
    sources = sorted({path for pattern in CANDIDATE_SIDE for path in package.glob(pattern)})
    sources += [path.resolve() for path in round_.candidate_files]
    compiled = [cached for source in sources
                if source.suffix == ".py" and (cached := Path(
                    importlib.util.cache_from_source(str(source)))).is_file()]
    return sources + compiled


def file_args(root: Path, round_: Round) -> list[str]:
    """Binds for a sandbox grading the workspace at `root` in `round_`: Python and the
    workspace read-only; of the grader and the round, only `candidate_files` (read-only, over
    an empty tmpfs that hides the rest, wherever the grader lies, inside the workspace too);
    every reference folder within reach covered by an empty tmpfs."""
    package = Path(grader.__file__).resolve().parent
    roots = _python_roots()
    args = []
    for writable in WRITABLE:
        args += ["--size", str(TMP_MB << 20), "--tmpfs", writable]
    for path in roots:
        args += ["--ro-bind", str(path), str(path)]
    # The workspace before anything laid over the grader: a workspace that holds the grader
    # (this repo's own exercises/, beside grader/ and reference/) would otherwise be bound over
    # those covers and show what they hide.
    workspace = root.resolve()
    args += ["--ro-bind", str(workspace), str(workspace), "--chdir", str(workspace)]
    hidden = sorted({package, round_.folder.resolve()}, key=str)
    for folder in hidden:
        args += ["--tmpfs", str(folder)]
    for path in candidate_files(round_):
        args += ["--ro-bind", str(path), str(path)]
    covered = [folder for folder in sorted(_reference_folders(), key=str)
               if any(folder.is_relative_to(path) for path in [*roots, workspace])]
    for folder in covered:
        args += ["--tmpfs", str(folder)]
    # Last, once every mount point exists: the sandbox's own root and /dev, and every empty
    # tmpfs laid over the grader, read-only, so that WRITABLE is all that is.
    for folder in [*hidden, *covered, Path("/dev"), Path("/")]:
        args += ["--remount-ro", str(folder)]
    return args


def environment_args() -> list[str]:
    """The sandbox's whole environment: none of the judge's (its secret above all)."""
    package_parent = str(Path(grader.__file__).resolve().parent.parent)
    env = grading_environment({
        "PATH": "/usr/bin:/bin", "HOME": "/tmp", "LANG": "C.UTF-8", "PYTHONPATH": package_parent,
        "PYTHONDONTWRITEBYTECODE": "1", "PYTHONHASHSEED": "0"})
    args = ["--clearenv"]
    for name, value in env.items():
        args += ["--setenv", name, value]
    return args


def _device_args(request: Request) -> list[str]:
    """The GPU's device files, for a torch request that may use CUDA."""
    if request.flavor != "torch" or request.device == "cpu":
        return []
    args = []
    for device in sorted(Path("/dev").glob("nvidia*")):
        args += ["--dev-bind", str(device), str(device)]
    return args


# --- one sandbox --------------------------------------------------------------------------------


_JOIN_CGROUP = 'for f in $GRADER_CGROUP_PROCS; do echo $$ > "$f" || exit 97; done; exec "$@"'


class Sandbox:
    """One running sandbox for one request: its bwrap process, its cgroup, the socket to its
    executor."""

    def __init__(self, request: Request, round_: Round) -> None:
        ensure_usable()
        found = support()
        self.request, self.round = request, round_
        self.cgroup: Cgroup | None = None
        if found.cgroup:
            self.cgroup = Cgroup.make(f"grader-{os.getpid()}-{next(_names)}",
                                      (request.memory_mb + EXECUTOR_MB) << 20, TASKS)
        self.oom_kills = memory.oom_kills()
        self.full_at_start, self.kills_at_start = self.memory_full(), self.memory_kills()
        ours, theirs = socket.socketpair()
        bwrap = found.bwrap or "bwrap"
        command = [bwrap, *_namespace_args(bwrap), *_executor_first(bwrap), *_system_args(),
                   *_device_args(request),
                   *file_args(Path(request.root), round_), *environment_args(),
                   sys.executable, "-P", "-m",
                   "grader.runner.executor", str(theirs.fileno()), str(round_.folder.resolve())]
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin")}
        if self.cgroup:
            env["GRADER_CGROUP_PROCS"] = " ".join(self.cgroup.procs)
            command = ["/bin/sh", "-c", _JOIN_CGROUP, "grader-sandbox", *command]
        self._stderr = tempfile.TemporaryFile()
        try:
            self.process = strays.retried(lambda: subprocess.Popen(
                command, pass_fds=[theirs.fileno()], env=env, stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL, stderr=self._stderr))
        except BaseException:
            ours.close()
            theirs.close()
            self._stderr.close()
            if self.cgroup:
                self.cgroup.remove()
            raise
        strays.own(self.process.pid)
        theirs.close()
        self.socket = ours
        self._ready = False
        self._executor: int | None = None

    def wait_ready(self) -> Sandbox:
        """Wait, once, for the executor to say it is ready (it imports torch first); the
        sandbox is started by the constructor and goes on starting meanwhile."""
        if self._ready:
            return self
        try:
            wait_readable(TreeWatch(self.socket.fileno(), self.process.pid), START_LIMIT_S)
            message, _ = receive(self.socket, READY_READ_S)
            if message.get("op") != "ready":
                raise ChannelClosed("no ready message")
            self._executor = executor_pid(self.process.pid)
        except (ChannelClosed, TimeoutError, FrameTimeout) as exc:
            why = self._stderr_tail() or (
                START_WORDS[exc.why].format(limit=START_LIMIT_S, backstop=BACKSTOP * START_LIMIT_S)
                if isinstance(exc, FrameTimeout) else str(exc) or "no answer")
            self.close()
            # Too little CPU to start, or no process, file or memory to start with: the
            # machine's, not a fault.
            starved = isinstance(exc, FrameTimeout) and exc.why == "wall" \
                or strays.machine_short(why)
            raise (SandboxStarved if starved else SandboxError)(
                f"the sandbox did not start: {why}") from exc
        self._ready = True
        return self

    def spent_s(self) -> float | None:
        """The CPU seconds every process of the sandbox but its executor has used, as its
        cgroup counted them (Cgroup.cpu_s, less the executor's own time as /proc gives it):
        what its children and everything they started cost, the processes the kernel reaped
        unasked included; None without a cgroup that counts it, or an executor to read."""
        total = self.cgroup.cpu_s() if self.cgroup else None
        fields = strays.stat_fields(self._executor) if self._executor else None
        if total is None or fields is None:
            return None
        return total - sum(int(f) for f in fields[11:13]) / os.sysconf("SC_CLK_TCK")

    def seen(self) -> strays.Usage | None:
        """The whole sandbox's Usage as this process sees it from outside, its open files
        those of the processes below its executor (the code's; bwrap and the executor are the
        grader's, and the executor is undumpable: its files are no count of the code's);
        none where the executor is not known."""
        return strays.tree_usage(self.process.pid,
                                 files_below=self._executor or strays.NO_PROCESS)

    def memory_full(self, fresh: bool = False) -> int | None:
        """Its cgroup's Cgroup.memory_full (None without a cgroup); `fresh`: counted from now,
        as a child begins (Cgroup.reset_memory_marks first)."""
        if self.cgroup and fresh:
            self.cgroup.reset_memory_marks()
        return self.cgroup.memory_full() if self.cgroup else None

    def memory_kills(self) -> int | None:
        """Its cgroup's Cgroup.memory_kills (None without a cgroup)."""
        return self.cgroup.memory_kills() if self.cgroup else None

    def killed_since(self, count: int | None) -> bool | None:
        """Whether the out-of-memory killer ended one of its processes since memory_kills read
        `count`; None where that cannot be told (no cgroup, or the kernel does not say)."""
        now = self.memory_kills()
        return None if now is None or count is None else now > count

    def filled_since(self, count: int | None) -> bool:
        """Whether its memory ran out at its own limit since memory_full read `count`. Without
        a cgroup it has no limit of its own to reach; where the kernel does not say, this says
        no (a kill its cgroup counted is then the machine's: undecided, not failed)."""
        now = self.memory_full()
        return now is not None and count is not None and now > count

    def _stderr_tail(self) -> str:
        self._stderr.seek(0, os.SEEK_END)
        size = self._stderr.tell()
        self._stderr.seek(max(0, size - 2000))
        return self._stderr.read().decode(errors="replace").strip()

    def send(self, message: dict[str, Any], fds: tuple[int, ...] = ()) -> None:
        send(self.socket, message, fds)

    def _receive(self, timeout_s: float) -> dict[str, Any]:
        """The executor's next message, waited for on the clock (TimeoutError past it)."""
        wait_for_answer(self.socket, time.monotonic() + timeout_s, self._executor)
        message, fds = receive(self.socket, timeout_s)
        for fd in fds:
            os.close(fd)
        return message

    def usage(self) -> strays.Usage | None:
        """The current child's tree's usage as the executor reads it in the sandbox's /proc;
        None when the executor is gone, stopped or says nothing that reads as one;
        TimeoutError when it does not answer in time (see SandboxedChild.usage)."""
        try:
            self.send({"op": "usage"})
            message = self._receive(USAGE_TIMEOUT_S)
        except ChannelClosed:
            return None
        cpu_s = message.get("cpu_s")
        if message.get("op") != "usage" or not isinstance(cpu_s, float) \
                or not math.isfinite(cpu_s) or cpu_s < 0:
            return None
        return strays.Usage(cpu_s, message.get("runnable") is True)

    def ended(self) -> Ended:
        """The executor's word on how the current child ended, checked before it is believed,
        waited for by the sandbox's work (see END_LIMIT_S): TimeoutError for an executor that
        used its limit or idled through it (wedged), ChannelClosed for one found stopped,
        SandboxStarved for one a busy machine gave too little CPU to answer."""
        watch = _Answering(self.socket.fileno(), self.process.pid, self._executor)
        while True:
            try:
                wait_readable(watch, END_LIMIT_S)
            except FrameTimeout as exc:
                if exc.why == "wall":
                    raise SandboxStarved(END_WORDS.format(backstop=BACKSTOP * END_LIMIT_S)) \
                        from None
                raise TimeoutError from None
            message = self._receive(READY_READ_S)
            if message.get("op") != "usage":  # a late answer to a usage given up on
                break
        how, cpu_s = message.get("how"), message.get("cpu_s")
        if message.get("op") != "ended" or not isinstance(how, str) or not _HOW.fullmatch(how) \
                or not isinstance(cpu_s, float) or not math.isfinite(cpu_s) or cpu_s < 0:
            raise ChannelClosed("a malformed answer")
        return Ended(how, cpu_s)

    def close(self) -> None:
        """Kill the sandbox and everything in it, and remove its cgroup."""
        self.socket.close()
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait()
        strays.disown(self.process.pid)
        self._stderr.close()
        if self.cgroup:
            self.cgroup.remove()


@dataclass(frozen=True)
class _Answering(TreeWatch):
    """A sandbox waited for on its socket, by its tree's work; an executor found stopped by a
    signal is continued at each look (see wait_for_answer), one held by a tracer will never
    answer: ChannelClosed at the next look, not at the end of the wait."""

    executor: int | None = None

    def usage(self) -> strays.Usage | None:
        if self.executor is not None and strays.held_after_resuming(self.executor):
            raise ChannelClosed("its executor was held by a tracer")
        return super().usage()


def wait_for_answer(sock: socket.socket, deadline: float, executor: int | None) -> None:
    """Wait until the executor has written something on `sock`, or the deadline passes
    (TimeoutError). An executor found stopped by a signal (the code under test's SIGSTOP, or a
    person's, or a tool's that pauses processes) is continued and waited for on: the sandbox
    is the grader's, and a stop costs it no more than a look. One held by a tracer will never
    answer: ChannelClosed at once, not at the deadline."""
    while True:
        left = deadline - time.monotonic()
        ready, _, _ = select.select([sock], [], [], max(0.0, min(left, STOPPED_POLL_S)))
        if ready:
            return
        if executor is not None and strays.held_after_resuming(executor):
            raise ChannelClosed("its executor was held by a tracer")
        if left <= STOPPED_POLL_S:
            raise TimeoutError


def executor_pid(root: int) -> int | None:
    """The executor's pid, as this process sees it: the shallowest process below the
    sandbox's `root` that is this Python running grader.runner.executor (bwrap's own command
    line names it too; the executor's children, forked from it, would carry its command line,
    but none exists yet when this is asked)."""
    python = os.fsencode(sys.executable)
    level = [root]
    while level:
        for pid in sorted(level):
            try:
                argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
            except OSError:
                continue
            if argv[0] == python and b"grader.runner.executor" in argv:
                return pid
        level = [c for pid in level for c in strays.children(pid)]
    return None


class SandboxedChild:
    """A child forked inside a sandbox, writing its frames to a pipe the judge made."""

    def __init__(self, owner: Sandboxes, job: ChildJob) -> None:
        self.owner = owner
        read_fd, write_fd = os.pipe()
        orders = Orders(job)
        try:
            sandbox = owner.current()
            self._full_at_start = sandbox.memory_full(fresh=True)
            self._kills_at_start = sandbox.memory_kills()
            self._spent_at_start = sandbox.spent_s()
            sandbox.send({"op": "start", "spec": job.spec}, (write_fd, orders.child_fd))
        except ChannelClosed:
            os.close(read_fd)
            orders.close()
            raise owner.lose() from None
        except BaseException:
            os.close(read_fd)
            orders.close()
            raise
        finally:
            os.close(write_fd)
            orders.handed_over()
        self.fd, self.orders = read_fd, orders
        self.setup = Setup()
        self._last: tuple[strays.Usage, strays.Usage] | None = None  # the executor's, ours

    def release(self) -> None:
        self.orders.release()

    def last_words(self) -> tuple[str, str]:
        return ask_last_words(lambda: self.owner.current().send({"op": "last_words"}), self.fd)

    def usage(self) -> strays.Usage | None:
        """The child's tree's usage as the executor reads it. Where the executor does not
        answer in time (a busy machine, or the code under test crowding it out of its own
        sandbox), the whole sandbox seen from here stands in: the CPU time the executor last
        gave plus what the sandbox has used since, and whether it is at work; so a spinning
        sandbox still uses up its limit, a starved one is waited for, and an idle one spends
        its idle allowance (never an answer yet: None, the clock)."""
        try:
            sandbox = self.owner.current()
            # Read before the executor reads its /proc: what the cgroup counted beyond the
            # tree's accounting is then never the tree's own time counted twice.
            spent = sandbox.spent_s()
            found = sandbox.usage()
        except ChildrenLost:
            return None
        except TimeoutError:
            seen = sandbox.seen()
            if self._last is None or seen is None:
                return None
            given, then = self._last
            found = strays.Usage(given.cpu_s + max(0.0, seen.cpu_s - then.cpu_s), seen.runnable,
                                 files=seen.files, hidden=seen.hidden, blocked=seen.blocked)
            return self._with_unseen(found, spent)
        seen = sandbox.seen()
        self._last = (found, seen) if found is not None and seen is not None else self._last
        if found is not None and seen is not None:
            # At work only where this process sees it so too, at this process's priority: code
            # in the sandbox can lower its executor's (its parent's) and its own alike, and
            # the executor's view then takes a wait the code chose for the machine's. A freezer
            # holds the sandbox where the executor cannot see it. Blocked in the kernel only as
            # this process sees it.
            found = replace(found, runnable=seen.frozen or (found.runnable and seen.runnable),
                            blocked=seen.blocked, files=seen.files, hidden=seen.hidden)
        return self._with_unseen(found, spent)

    def _with_unseen(self, found: strays.Usage | None,
                     spent: float | None) -> strays.Usage | None:
        """`found` with the CPU time the sandbox's cgroup counted since this child began
        beyond the tree's own (Usage.unseen_s): work in processes the kernel reaped unasked,
        which no /proc look can add up, and which would otherwise leave a tree that spins in
        them looking runnable yet charged nothing (starved: undecided, not timed out)."""
        if found is None or spent is None or self._spent_at_start is None:
            return found
        return replace(found, unseen_s=max(0.0, spent - self._spent_at_start - found.cpu_s))

    def end(self, kill: bool) -> Ended:
        """Reap the child through the executor; a sandbox that does not answer in time (its
        executor stopped, killed or wedged by the code under test) is killed, and the next
        child gets a fresh one."""
        os.close(self.fd)
        self.orders.close()
        try:
            sandbox = self.owner.current()
            sandbox.send({"op": "end", "kill": kill})
            ended = sandbox.ended()
        except SandboxStarved as exc:
            self.owner.starve(exc)
            return Ended("was lost with its sandbox, which the machine was too busy to run",
                         0.0, TOO_BUSY.format(what="this"))
        except (ChannelClosed, TimeoutError):
            lost = self.owner.lose()
            return Ended(_LOST_CHILD[str(lost)], 0.0,
                         SHORT_OF_MEMORY if str(lost) == LOST_TO_THE_MACHINE else "")
        if ended.how == strays.OUT_OF_MEMORY:
            ended = self._out_of_memory(sandbox, ended)
        return replace(ended, machine=ended.machine or self.setup.machine(ended.how))

    def _out_of_memory(self, sandbox: Sandbox, ended: Ended) -> Ended:
        """A child the executor saw killed for memory: the machine's where the sandbox's own
        cgroup counted the kill and its own limit had not filled."""
        killed = sandbox.killed_since(self._kills_at_start)
        if killed is False:  # a SIGKILL the killer did not send: the machine's count rose
            return replace(ended, how=strays.describe_signal(signal.SIGKILL))
        if killed and not sandbox.filled_since(self._full_at_start):
            return replace(ended, machine=SHORT_OF_MEMORY)
        return ended


class Sandboxes:
    """The sandbox of one request, started on first use (or handed over already starting) and
    replaced if it has to be killed."""

    def __init__(self, request: Request, round_: Round, started: Sandbox | None = None) -> None:
        self.request, self.round = request, round_
        self._sandbox = started
        self.lost: ChildrenLost | None = None

    def current(self) -> Sandbox:
        """The request's sandbox; ChildrenLost once it had to be killed (the code under test
        stopped it: a fresh one would be stopped again, each time at the cost of a timeout),
        or once it got too little CPU to start (the checks not run are undecided: a machine
        that busy judges nothing, and another start would wait as long again)."""
        if self.lost:
            raise self.lost
        try:
            if self._sandbox is None:
                self._sandbox = Sandbox(self.request, self.round)
            return self._sandbox.wait_ready()
        except SandboxStarved as exc:
            raise self.starve(exc) from None
        except strays.NoProcessLeft as exc:
            raise self.starve(SandboxStarved(f"the sandbox did not start: {exc}")) from None

    def starve(self, why: SandboxStarved) -> ChildrenLost:
        """The machine was too busy to run the sandbox: the checks not run yet are undecided
        (a fresh sandbox would wait as long again)."""
        self.discard()
        self.lost = ChildrenLost(f"not run: {TOO_BUSY.format(what='this')} ({why})",
                                 status="undecided")
        return self.lost

    def lose(self) -> ChildrenLost:
        """The sandbox stopped answering: killed, and the checks not run yet are errors (the
        code under test stopped it), said as LOST_FOR_MEMORY where the kernel was ending
        processes for want of memory meanwhile (one of the sandbox's own, where its cgroup
        says; else any); undecided (LOST_TO_THE_MACHINE) where its cgroup counted one of its
        own processes killed and its own memory never ran out: the memory that did was its
        container's or the machine's; undecided too while the machine's table of open files is
        crowded (its executor, refused a file, could not go on: a classmate's sandbox, or any
        program, may have filled the table; the code's own files are bounded by its limits and
        stopped at strays.files_held_most())."""
        sandbox = self._sandbox
        killed = None if sandbox is None else sandbox.killed_since(sandbox.kills_at_start)
        short = killed if killed is not None else \
            sandbox is not None and memory.rose(sandbox.oom_kills, memory.oom_kills())
        machine = sandbox is not None and bool(killed) \
            and not sandbox.filled_since(sandbox.full_at_start) or strays.files_crowded()
        self.discard()
        self.lost = ChildrenLost(LOST_TO_THE_MACHINE, status="undecided") if machine \
            else ChildrenLost(LOST_FOR_MEMORY if short else LOST)
        return self.lost

    def discard(self) -> None:
        if self._sandbox is not None:
            self._sandbox.close()
            self._sandbox = None

    def spawn(self, job: ChildJob) -> SandboxedChild:
        return SandboxedChild(self, job)


@contextmanager
def sandboxed_children(request: Request, round_: Round,
                       started: Sandbox | None = None) -> Iterator[Spawn]:
    """Grading mode: every child of the request runs in the request's own sandbox, which is
    killed, with all it holds, when the request is done."""
    sandboxes = Sandboxes(request, round_, started)
    try:
        yield sandboxes.spawn
    finally:
        sandboxes.discard()


def _same_sandbox(a: Request, b: Request) -> bool:
    return (a.root, a.round, a.flavor, a.memory_mb, a.device) == \
        (b.root, b.round, b.flavor, b.memory_mb, b.device)


def prestarted(expected: Request) -> Children:
    """Sandboxed children, with the sandbox of the request the CLI said would come first
    started now, so that it imports torch while the worker does (a cold `check --sandbox`
    then costs little more than a plain one). A different request gets a sandbox of its own."""
    from grader.engine.rounds import get_round

    waiting = [Sandbox(expected, get_round(expected.round))]

    def children(request: Request, round_: Round) -> AbstractContextManager[Spawn]:
        started = waiting.pop() if waiting and _same_sandbox(request, expected) else None
        return sandboxed_children(request, round_, started)

    return children
