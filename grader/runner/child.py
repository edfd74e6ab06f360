"""The forked child: limits, output capture, importing the candidate's part, running probes.

Everything here runs after os.fork() in a process that will also run candidate code, and ends
with os._exit, so nothing the candidate does (sys.exit, atexit hooks, a hang, a crash) reaches
the worker beyond a missing or late frame.
"""

from __future__ import annotations

import ctypes
import errno
import functools
import importlib
import importlib.abc
import importlib.machinery
import io
import os
import resource
import signal
import socket
import sys
import time
import traceback
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

from grader.engine.python_source import NotText, source_text
from grader.probes.api import Api, describe_exception
from grader.probes.autograd import refused_for_hooks, warm_the_profiler, watching_the_import
from grader.probes.backends import CandidateFault, make_backend
from grader.probes.library import BEFORE_FORK, resolve
from grader.runner import strays
from grader.runner.nofork import (
    drop_ptrace_capability,
    forbid_machine_wide_holds,
    forbid_new_processes,
)
from grader.runner.protocol import (
    LAST_WORDS_SIGNAL,
    ChildSpec,
    ProbeFrame,
    probe_frame,
    receive_orders,
    write_frame,
)

OUTPUT_LIMIT = 4000
FILE_SIZE_LIMIT = 64 * 1024 * 1024
PER_USER_CAPS = {resource.RLIMIT_SIGPENDING: 256, resource.RLIMIT_MSGQUEUE: 128 * 1024,
                 resource.RLIMIT_NOFILE: 256}
"""Limits on what the kernel counts per user or for the whole machine, for all processes
together (signals queued and not yet taken, the bytes of POSIX message queues, the table of
open files): code in a sandbox is that user's outside too (root, where the grader runs as
root), and under the defaults (about 96,000 signals, 800 KiB, 20,000 files a process) it could
queue signals until no process of root's on the machine could queue one or make a POSIX timer,
or hold open files until the machine's table was full (140 processes of 20,000 filled one of
2.4 million: every other sandbox then failed to start, and a worker's children to import).
Each is checked against the limit of the process that queues, receives or opens, so capped in
every child (and a sandbox's executor: TASKS processes of 256 files, 65,536 in all) it bounds
the sandbox's count as a whole; no exercise queues a signal or a message, or holds more than a
few files. The other per-user counts are refused call by call (nofork.REFUSED)."""


class CappedText(io.TextIOBase):
    """A stdout/stderr stand-in that keeps the first few KB and counts the rest."""

    def __init__(self, limit: int = OUTPUT_LIMIT) -> None:
        self.limit = limit
        self.parts: list[str] = []
        self.kept = 0
        self.dropped = 0

    def writable(self) -> bool:
        return True

    def write(self, text: str) -> int:
        room = self.limit - self.kept
        if room > 0:
            self.parts.append(text[:room])
            self.kept += min(len(text), room)
        self.dropped += max(0, len(text) - max(room, 0))
        return len(text)

    def take(self) -> str:
        """Return and forget what was captured since the last call."""
        text = "".join(self.parts)
        if self.dropped:
            text += f"\n... ({self.dropped} more characters not shown)"
        self.parts, self.kept, self.dropped = [], 0, 0
        return text


def _virtual_memory_bytes() -> int | None:
    try:
        with open("/proc/self/status") as status:
            for line in status:
                if line.startswith("VmSize:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        return None
    return None


CORE_LIMIT = 1
"""Every child's RLIMIT_CORE, soft and hard, in bytes: the kernel's word for no core dump at
all. 0 stops a core file, but where the machine's kernel.core_pattern pipes cores to a program
(apport, systemd-coredump) the kernel starts that program as root for each crash whatever 0
says, outside every sandbox and its cgroup (code that crashes in a loop would load the machine
for its classmates); at 1 it refuses the dump. The children's filter keeps code from lowering
it (nofork.forbid_machine_wide_holds)."""


def apply_limits(memory_mb: int) -> None:
    """Cap address space (on top of what torch already maps), file size, core dumps and the
    per-user counts (PER_USER_CAPS), each as a hard limit too, so that the code under test
    cannot raise them again. `memory_mb` 0: no address-space cap (a child that sets up CUDA:
    cuInit reserves tens of GB of virtual address space and fails under any cap that would
    still catch a runaway allocation; the sandbox's cgroup and the check's limits remain the
    guards)."""
    _cap(resource.RLIMIT_CORE, CORE_LIMIT)
    _cap(resource.RLIMIT_FSIZE, FILE_SIZE_LIMIT)
    cap_per_user_counts()
    current = _virtual_memory_bytes()
    if current is not None and memory_mb > 0:
        _cap(resource.RLIMIT_AS, current + memory_mb * 1024 * 1024)


def cap_per_user_counts() -> None:
    """Lower this process's PER_USER_CAPS, soft and hard."""
    for limit, value in PER_USER_CAPS.items():
        _cap(limit, value)


def _cap(limit: int, value: int) -> None:
    """Set `limit` to `value`, soft and hard, or to the hard limit this process was given where
    that is lower (a machine's `ulimit -f`): a hard limit can only be lowered."""
    hard = resource.getrlimit(limit)[1]
    if hard != resource.RLIM_INFINITY:
        value = min(value, hard)
    resource.setrlimit(limit, (value, value))


OOM_SCORE_ADJ_MAX = 1000


def countable() -> None:
    """Make this process dumpable again: forked from an undumpable worker or executor, it
    would keep its /proc/<pid>/fd and map_files from a grader that runs as an ordinary user,
    whose count of a tree's open files while the machine's table is crowded (strays.files_of)
    would then see none of them. Code that makes itself undumpable again is stopped while they
    are counted (strays.Usage.hidden). It dumps no core all the same (CORE_LIMIT), and the
    code under test could already read its own process's memory."""
    strays.set_dumpable(True)


def first_for_the_killer() -> None:
    """Make this process, which is about to run candidate code, the first the kernel's
    out-of-memory killer ends (oom_score_adj at its highest; raising it needs no privilege):
    memory it holds where no per-process measure sees it (a memfd never mapped, a tmpfs file)
    would otherwise have the killer pick the largest process instead, the grading worker or a
    sandbox's executor, and lose a whole run to the code's doing. Its children inherit it.
    Code that sets it back (it may, down to what it was) is where it was without this."""
    try:
        Path("/proc/self/oom_score_adj").write_text(str(OOM_SCORE_ADJ_MAX))
    except OSError:
        pass  # no /proc here: the memory caps remain the guards


def _die_with_worker(worker_pid: int | None) -> None:
    """Ask Linux to kill this child when the worker dies (an interrupted or killed batch), so a
    candidate's endless loop cannot outlive the grader; elsewhere the timeout must do."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, int(signal.SIGKILL))  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        return
    if worker_pid is not None and os.getppid() != worker_pid:
        os._exit(1)  # the worker died before the request took effect


def _answer_last_words(fd: int, capture: CappedText, folder: Path) -> None:
    """At a timeout the worker asks, before killing this child, for what the code printed so
    far and the candidate's line it is on: the best clues to an endless loop. Python runs the
    handler between bytecodes, so a loop in Python answers; a call stuck in C does not, and
    the worker kills it after a short grace."""

    def answer(signum: int, frame: Any) -> None:
        try:
            write_frame(fd, {"kind": "last_words", "output": capture.take(),
                             "where": _candidate_line(frame, folder)})
        finally:
            os._exit(0)

    signal.signal(LAST_WORDS_SIGNAL, answer)


def _candidate_line(frame: Any, folder: Path) -> str:
    """The innermost frame of the stack that lies in the candidate's folder, as 'file, line N:
    code'; "" when none does."""
    import linecache

    while frame is not None:
        path = Path(frame.f_code.co_filename)
        if path.is_relative_to(folder):
            line = linecache.getline(str(path), frame.f_lineno).strip()
            return f"{path.relative_to(folder.parent)}, line {frame.f_lineno}: {line}"
        frame = frame.f_back
    return ""


def _silence_standard_streams() -> None:
    """Point fds 0-2 at /dev/null so nothing the candidate writes reaches the worker's stdout."""
    devnull = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(devnull, fd)
    os.close(devnull)


class _FreshSource(importlib.machinery.SourceFileLoader):
    """Compiles a handed-in file from its text as it is on disk now, never via __pycache__,
    and as the UTF-8 text people read (grader.engine.python_source), whatever coding it
    declares.

    A bytecode cache is trusted when the source's mtime (whole seconds) and size match (or,
    for an unchecked hash-based one, always), so an edit of the same size within the same
    second, another submission copied in with its timestamps, or a cache compiled from other
    code and handed in beside the file would otherwise be graded in place of the text.
    """

    def get_code(self, fullname: str) -> Any:
        try:
            text = source_text(self.get_data(self.path))
        except NotText as exc:
            raise SyntaxError(f"{exc}: save the file as UTF-8",
                              (self.path, exc.line, 1, None)) from None
        return self.source_to_code(text, self.path)


class _ExercisesFinder(importlib.abc.MetaPathFinder):
    """Finds every module handed in, from Python source only, each loaded with _FreshSource:
    `exercises` and its modules in the workspace, and any other module whose file lies in the
    workspace (a helper the code reaches through sys.path), unless it lies in an installed
    library (a virtual environment kept in the workspace). Every other import (numpy, torch,
    ...) goes through the usual finders and caches.

    Python's own finders prefer a compiled extension (`part1.cpython-311-x86_64-linux-gnu.so`)
    to the `.py` beside it, and load a lone `.pyc` as a module: code that no review reads and no
    hint can quote. Here a module is its `.py` or nothing, and a compiled one alone is an
    ImportError that says so (a folder without __init__.py is still a namespace package)."""

    def __init__(self, root: Path) -> None:
        self.root = str(root)
        inside = os.path.realpath(root)
        self.inside = inside
        self.installed = tuple(_library_folders() | {
            real for entry in sys.path if entry and os.path.isdir(entry)
            if not _below(real := os.path.realpath(entry), inside) and not _below(inside, real)})
        """Where installed code lives: the libraries, and every folder on the import path
        before the candidate's code ran (PYTHONPATH's too), none in or around the workspace."""
        self.libraries = tuple(folder for folder in self.installed
                               if folder != inside and _below(folder, inside))
        """The installed libraries kept in the workspace (a virtual environment there)."""

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> Any:
        if fullname.partition(".")[0] == "exercises":
            return self.source_only(fullname, list(path or [self.root]))
        found = importlib.machinery.PathFinder.find_spec(fullname, path)
        if found is None or not found.has_location or not found.origin:
            return None
        where = os.path.realpath(found.origin)
        if isinstance(found.loader, COMPILED) and not _within(where, self.installed):
            # Code written at run time from data (a `.pyc` made in /tmp from bytes the
            # submission hid in a data file, a package's __path__ pointed there), which no
            # review reads.
            raise ImportError(f"{Path(found.origin).name} is compiled code outside every "
                              "installed library, which the grader does not run",
                              name=fullname)
        if not _within(where, (self.inside,)) or _within(where, self.libraries):
            return None  # not handed in: a library's, or one kept in the workspace
        origin = Path(found.origin)
        folder = origin.parent.parent if found.submodule_search_locations else origin.parent
        return self.source_only(fullname, [str(folder)])

    def source_only(self, fullname: str, entries: list[str]) -> Any:
        """The module from its .py source in one of `entries`; an ImportError where the module
        found there is compiled."""
        for entry in entries:
            found = importlib.machinery.FileFinder(
                entry, (_FreshSource, importlib.machinery.SOURCE_SUFFIXES)).find_spec(fullname)
            if found is not None and found.loader is not None:
                return found
        name = fullname.rpartition(".")[2]
        special = next((f"{entry}/{name}.py" for entry in entries
                        if os.path.lexists(f"{entry}/{name}.py")
                        and not os.path.isfile(f"{entry}/{name}.py")), None)
        if special is not None:
            raise ImportError(f"{name}.py is not a regular file (a folder, a FIFO, a device or a "
                              "broken link), which the grader never opens", name=fullname)
        spec = importlib.machinery.PathFinder.find_spec(fullname, entries)
        if spec is None or (spec.origin is None and spec.submodule_search_locations):
            return spec  # nothing, or a namespace package
        shown = Path(spec.origin or fullname).name
        raise ImportError(f"{shown} is compiled code, which the grader does not run: hand in "
                          "the module's .py source", name=fullname)


COMPILED = (importlib.machinery.SourcelessFileLoader, importlib.machinery.ExtensionFileLoader)
"""The loaders of modules that are no source: bytecode alone, and extensions."""


def _below(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)


def _within(path: str, folders: tuple[str, ...]) -> bool:
    return any(_below(path, folder) for folder in folders)


def _library_folders() -> set[str]:
    """Where installed code lives: Python's own prefixes and every site-packages folder."""
    import site

    folders = {sys.prefix, sys.exec_prefix, sys.base_prefix, sys.base_exec_prefix,
               *site.getsitepackages(), site.getusersitepackages()}
    folders.update(entry for entry in sys.path if os.path.basename(entry) in
                   ("site-packages", "dist-packages"))
    return {os.path.realpath(folder) for folder in folders if folder}


def _no_new_archives() -> None:
    """Let a zip archive import modules only where it was on sys.path before the candidate's
    code ran: one that code puts there (`sys.path.insert(0, "lib.dat")`, any name) would run
    modules, bytecode included, that no review reads. Python's own archives, if any, still
    import."""
    import zipimport

    known = {entry for entry in sys.path if os.path.isfile(entry)}

    def archives(path: str) -> Any:
        if path not in known:
            raise ImportError(f"{path}: modules are imported from source files only")
        return zipimport.zipimporter(path)

    sys.path_hooks[:] = [archives if hook is zipimport.zipimporter else hook
                         for hook in sys.path_hooks]


def _import_module(root: Path, module: str) -> Any:
    """Import exercises.<module> from the workspace at root, always from its current text.

    Only the `exercises` package is found in the workspace (root is not put on sys.path), so
    nothing else in the folder, a `grader/` or `numpy/` of its own, can shadow a real module."""
    if not any(isinstance(f, _ExercisesFinder) for f in sys.meta_path):
        for name in [m for m in sys.modules if m == "exercises" or m.startswith("exercises.")]:
            del sys.modules[name]
        sys.meta_path.insert(0, _ExercisesFinder(root))
        _no_new_archives()
        importlib.invalidate_caches()
    return importlib.import_module(f"exercises.{module}")


def files_full(exc: BaseException) -> bool:
    """Whether an import failed because the machine's table of open files was full (ENFILE,
    anywhere in the chain of exceptions it raised): the machine's doing, as when it refuses a
    process. The code's own limit on files (EMFILE) is the code's."""
    seen: BaseException | None = exc
    for _ in range(16):
        if seen is None:
            return False
        if isinstance(seen, OSError) and seen.errno == errno.ENFILE:
            return True
        seen = seen.__cause__ or seen.__context__
    return False


def describe_import_failure(exc: BaseException, folder: Path) -> str:
    """A syntax error names file, line and the offending text; a torch.func transform of
    autograd's refused under the import's watch (watching_the_import) says that autograd ran
    at import; anything else, its own line."""
    if isinstance(exc, SyntaxError):
        where = Path(exc.filename or "?")
        shown = where.relative_to(folder.parent) if where.is_relative_to(folder) else where
        text = (exc.text or "").rstrip()
        return f"SyntaxError: {exc.msg} ({shown}, line {exc.lineno})" + (
            f"\n    {text}" if text else ""
        )
    raised = describe_exception(exc, folder)
    said = f"{raised.type}: {raised.message}" + (f"\n  at {raised.where}" if raised.where else "")
    if refused_for_hooks(raised):
        return ("autograd ran while your file was imported (a torch.func transform at module "
                "level: grad, vjp or jacrev differentiate): " + said)
    return said


def _prepare(fd: int, memory_mb: int, flavor: str, worker_pid: int | None,
             folder: Path) -> CappedText:
    """Everything a child does before running any code of the candidate's or a probe's."""
    os.setpgid(0, 0)
    _die_with_worker(worker_pid)
    _silence_standard_streams()
    apply_limits(memory_mb)
    capture = CappedText()
    sys.stdout = sys.stderr = capture
    _answer_last_words(fd, capture, folder)
    if flavor == "torch" or "torch" in sys.modules:
        import torch

        torch.set_num_threads(1)
    _unwritten_reads_nan()
    return capture


def _unwritten_reads_nan() -> None:
    """Arrays made without values (np.empty, np.empty_like, torch.empty, torch.empty_like,
    Tensor.new_empty) hold NaN here where they hold floating-point numbers: code that reads an
    entry it never wrote reads the same in every run and every process, instead of what an
    earlier array left in memory handed back, which now and then is the right answer (a check,
    or a change tried to name a slip, would then pass by luck)."""
    import numpy as np

    def fill_array(made: Any) -> None:
        if isinstance(made, np.ndarray) and made.dtype.kind in "fc":
            made.fill(np.nan)

    for name in ("empty", "empty_like"):
        setattr(np, name, _filled(getattr(np, name), fill_array))
    torch: Any = sys.modules.get("torch")
    if torch is None:
        return

    def fill_tensor(made: Any) -> None:
        # Through .data: the tensor's own version counter, which autograd's errors quote,
        # stays where a tensor just made starts.
        if isinstance(made, torch.Tensor) and made.is_floating_point() \
                and made.device.type != "meta":
            made.data.fill_(float("nan"))

    for name in ("empty", "empty_like"):
        setattr(torch, name, _filled(getattr(torch, name), fill_tensor))
    torch.Tensor.new_empty = _filled(torch.Tensor.new_empty, fill_tensor)


def _filled(make: Callable[..., Any], fill: Callable[[Any], None]) -> Callable[..., Any]:
    """`make`, with `fill` applied to what it returns."""
    @functools.wraps(make)
    def made(*args: Any, **kwargs: Any) -> Any:
        result = make(*args, **kwargs)
        fill(result)
        return result

    return made


def _held_to_one_thread() -> None:
    """In a child that may start no thread, torch's thread counts stay at one: code that asks
    for more (torch.set_num_threads(4), honest, if needless) would have OpenMP start threads
    at the next large operation, which the filter refuses and OpenMP answers by ending the
    process. The request is ignored instead; the work is the same on one thread."""
    torch: Any = sys.modules.get("torch")
    if torch is None:
        return

    def one_thread(count: int) -> None:
        """Ignored here: this process runs on one thread (grader.runner.nofork)."""

    torch.set_num_threads = one_thread
    torch.set_num_interop_threads = one_thread


def ready_for(spec: ChildSpec) -> None:
    """Do, in the process about to fork a child for `spec` (the worker, a sandbox's executor:
    both call this), what the child's probes need done before any candidate code runs
    (library.BEFORE_FORK)."""
    for call in spec["calls"]:
        prepare = BEFORE_FORK.get(call["probe"])
        if prepare is not None:
            prepare()


def run_child(fd: int, orders: int, spec: ChildSpec, helpers: ModuleType,
              worker_pid: int | None = None) -> None:
    """Run spec's calls, one frame each on `fd`, after importing the candidate's part
    (spec.module), or, for a baseline (module None), with no candidate code at all, spec.root
    then being the reference folder; each call once its arguments arrive on `orders` (the
    judge sends them after the "imported" frame and after each call's frame). The first frame
    says the child's own setup is done ("set_up") or why it failed ("setup_failed"). Never
    returns.

    A call that uses the device runs without the address-space cap when CUDA is there
    (spec.device_ready)."""
    code = 0
    try:
        module_name = spec["module"]
        root = Path(spec["root"])
        folder = root / "exercises" if module_name else root
        try:
            capture = _set_up(fd, orders, spec, worker_pid, folder)
        except BaseException as exc:  # noqa: BLE001 - said before any candidate code ran
            write_frame(fd, {"kind": "setup_failed", "message": _setup_failure(exc)})
            raise
        write_frame(fd, {"kind": "set_up"})
        if module_name is None:
            api = Api(ModuleType("baseline"), make_backend(spec["flavor"]), folder, helpers)
        else:
            try:
                with watching_the_import():
                    module = _import_module(root, module_name)
            except BaseException as exc:  # noqa: BLE001 - a failed import is a result
                message = describe_import_failure(exc, folder)
                write_frame(fd, {"kind": "import_refused" if files_full(exc) else
                                 "import_error", "message": message, "output": capture.take()})
                os._exit(0)
            write_frame(fd, {"kind": "imported", "output": capture.take()})
            api = Api(module, make_backend(spec["flavor"]), folder, helpers,
                      lambda name: _import_module(root, name))
        told = socket.socket(fileno=orders)
        for offset, call in enumerate(spec["calls"]):
            _send_probe(fd, spec["first"] + offset, call["probe"], receive_orders(told), api,
                        folder, capture)
    except BaseException:  # noqa: BLE001 - last resort: report, then leave without cleanup
        code = 70
        _report_crash(fd)
    finally:
        os._exit(code)


def _set_up(fd: int, orders: int, spec: ChildSpec, worker_pid: int | None,
            folder: Path) -> CappedText:
    """Everything the child does before the first line of candidate code (or, for a child
    with no candidate code, before the first probe): what fails or hangs here is never the
    code's, and the judge hears where the boundary lies (the "set_up" frame)."""
    countable()
    _close_inherited_files(fd, orders)
    candidate = spec["module"] is not None
    uses_device = spec["device_ready"] and any(c["uses_device"] for c in spec["calls"])
    capture = _prepare(fd, 0 if uses_device else spec["memory_mb"], spec["flavor"],
                       worker_pid, folder)
    if candidate:
        first_for_the_killer()
        drop_ptrace_capability()
        forbid_machine_wide_holds()
    if candidate and any(c["forkless"] for c in spec["calls"]):
        threadless = any(c["threadless"] for c in spec["calls"]) and not uses_device
        if threadless and any(c["profiled"] for c in spec["calls"]):
            warm_the_profiler()
        forbid_new_processes(threads=not threadless)
        if threadless:
            _held_to_one_thread()
    return capture


def _setup_failure(exc: BaseException) -> str:
    """What stopped the child's setup, in a line: the exception's type and text."""
    return f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__


def _close_inherited_files(*keep: int) -> None:
    """Close every file this child inherited but its frame pipe, its orders socket and the
    standard streams: the worker's (or the sandbox's) other pipes and sockets are not the
    candidate's to write."""
    low = 3
    for fd in sorted(keep):
        os.closerange(low, fd)
        low = fd + 1
    os.closerange(low, _max_fd())


def _max_fd() -> int:
    soft = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    return soft if soft != resource.RLIM_INFINITY and soft < 1 << 20 else 1 << 16


def _send_probe(fd: int, index: int, probe: str, args: dict[str, Any], api: Api, folder: Path,
                capture: CappedText) -> None:
    began = time.perf_counter()
    frame = _run_probe(probe, args, api, folder)
    frame["index"], frame["duration_s"] = index, time.perf_counter() - began
    frame["output"] = capture.take()
    try:
        write_frame(fd, frame)
    except Exception as exc:  # noqa: BLE001 - e.g. a probe returned an unpicklable value
        write_frame(fd, probe_frame("error", index, f"the grader could not send this result: "
                                    f"{exc}", duration_s=frame["duration_s"]))


def _report_crash(fd: int) -> None:
    try:
        os.write(fd, b"")
        if sys.__stderr__ is not None:
            sys.__stderr__.write(traceback.format_exc())
    except Exception:  # noqa: BLE001
        pass


def _raised_in(exc: BaseException, folder: Path) -> bool:
    """Whether `exc` was raised by code in `folder` (the stub's own `raise NotImplementedError`),
    not by a library below it (torch's "Cannot access storage of BatchedTensorImpl")."""
    tb = exc.__traceback__
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    return tb is not None and Path(tb.tb_frame.f_code.co_filename).is_relative_to(folder)


def _run_probe(probe: str, args: dict[str, Any], api: Api, folder: Path) -> ProbeFrame:
    """One probe's frame: its observation, or why there is none."""
    try:
        return probe_frame("observation", data=resolve(api, probe)(api, **args))
    except NotImplementedError as exc:
        if _raised_in(exc, folder):
            return probe_frame("not_implemented", message=str(exc) or "NotImplementedError")
        return _error_frame(exc, folder)
    except CandidateFault as exc:
        return probe_frame("fault", message=str(exc))
    except MemoryError:
        return probe_frame("fault", message="ran out of memory (the grader caps memory per part)")
    except BaseException as exc:  # noqa: BLE001 - SystemExit, KeyboardInterrupt, anything
        return _error_frame(exc, folder)


def _error_frame(exc: BaseException, folder: Path) -> ProbeFrame:
    raised = describe_exception(exc, folder)
    where = f"\n  at {raised.where}" if raised.where else ""
    return probe_frame("error", message=f"{raised.type}: {raised.message}{where}")
