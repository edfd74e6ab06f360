"""The sandbox, end to end through the CLI.

Submissions written to cheat, escape, forge and exhaust (tests/adversaries) are graded with two
honest classmates in one `grader grade` batch in the sandbox. Each folder's expect.toml pins its
row; this module also checks what no row can show: nothing outlives the batch, no file outside a
sandbox changed, neither the instructor's secret nor a connection got out, and the batch says it
was sandboxed. Then `grader check --sandbox`, `grader sandbox`, and what each says on a machine
where no sandbox can be made.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
import tomllib
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

import grader
import grader.runner
from grader.cli import cli
from grader.engine.limits import DEFAULT_MEMORY_MB
from grader.engine.secret import SECRET_ENV
from grader.runner import sandbox, strays
from grader.runner.sandbox import Support, support

from helpers import (
    NO_SANDBOX,
    REPO,
    held_by_a_tracer,
    needing_the_grading_environment,
    needs_sandbox,
    run_grader,
    run_owned,
    run_tiny_sandboxed,
    spinning,
    write_workspace,
)

ADVERSARIES = Path(__file__).parent / "adversaries"
NAMES = sorted(p.name for p in ADVERSARIES.iterdir() if (p / "expect.toml").is_file())
COACH = 'parts = ["part1", "part2"]\ntimeout = 4\n'
SECRET = "the-coach-secret-5f1c9a"
SPY_PORT = 47123  # the port spy/submission/part1_inplace.py tries
LINGER_NAME = "grader-adversary-linger"


def fingerprint(*folders: Path) -> dict[str, str]:
    """Every file below the folders, by content."""
    return {str(path): hashlib.sha256(path.read_bytes()).hexdigest()
            for folder in folders if folder.is_dir()
            for path in sorted(folder.rglob("*")) if path.is_file()
            and "__pycache__" not in path.parts}


def lingering() -> list[str]:
    """Command lines of live processes started by the linger adversary."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            command = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(
                errors="replace")  # other tests' processes carry hostile names meanwhile
        except OSError:
            continue
        if LINGER_NAME in command:
            found.append(command)
    return found


class Listener:
    """A TCP listener on the host's loopback, counting who connects."""

    def __init__(self, port: int) -> None:
        self.socket = socket.create_server(("127.0.0.1", port), reuse_port=True)
        self.socket.settimeout(0.2)
        self.connections = 0
        self._stop = False
        self._thread = threading.Thread(target=self._accept, daemon=True)
        self._thread.start()

    def _accept(self) -> None:
        while not self._stop:
            try:
                connection, _ = self.socket.accept()
            except OSError:
                continue
            self.connections += 1
            connection.close()

    def close(self) -> None:
        self._stop = True
        self._thread.join()
        self.socket.close()


def adversary_batch(tmp: pytest.TempPathFactory) -> dict[str, Any]:
    """Every adversary and both classmates graded in one sandboxed `grader grade` (run ahead),
    with the instructor's secret in its environment and a listener on the spy's port."""
    root = tmp.mktemp("adversaries")
    for name in NAMES:
        shutil.copytree(ADVERSARIES / name / "submission", root / "class" / name)
    (root / "coach.toml").write_text(COACH)
    guarded = (Path(grader.__file__).parent, REPO / "reference", root / "class")
    before = fingerprint(*guarded)
    listener = Listener(SPY_PORT)
    try:
        done = run_grader("grade", root / "class", "--config", root / "coach.toml", "--json",
                          "--csv", root / "grades.csv", "--seed", "3", "--jobs", "2",
                          cwd=root, env={SECRET_ENV: SECRET})
    finally:
        listener.close()
    assert done.returncode == 0, done.stdout + done.stderr
    doc = json.loads(done.stdout)
    return {"doc": doc, "rows": {Path(s["path"]).name: s for s in doc["submissions"]},
            "csv": (root / "grades.csv").read_text(), "output": done.stdout + done.stderr,
            "connections": listener.connections, "lingering": lingering(),
            "changed": sorted(k for k, v in fingerprint(*guarded).items() if before.get(k) != v)}


def checked_in_the_sandbox(tmp: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    """`grader check part1 part3 --sandbox` on the numpy references (run ahead)."""
    root = write_workspace(tmp.mktemp("boxed") / "ws", "numpy")
    done = run_grader("check", "part1", "part3", "--sandbox", "--json", "--seed", "5",
                      "--workspace", root, cwd=root)
    assert done.returncode == 0, done.stdout + done.stderr
    return root, json.loads(done.stdout)


JOBS = () if NO_SANDBOX else (adversary_batch, checked_in_the_sandbox)


@pytest.fixture(scope="module")
def batch(grading) -> dict[str, Any]:  # type: ignore[no-untyped-def]
    if NO_SANDBOX:
        pytest.skip(NO_SANDBOX)
    return grading.once(adversary_batch)


@pytest.mark.slow
@pytest.mark.parametrize("name", NAMES)
def test_each_adversary_gets_its_verdict(batch: dict[str, Any], name: str) -> None:
    expect = tomllib.loads((ADVERSARIES / name / "expect.toml").read_text())
    row = batch["rows"][name]
    assert row["status"] == expect["status"]
    if "score" in expect:
        assert row["score"] == pytest.approx(expect["score"], abs=1e-3), row
    checks = {c["id"]: c for p in row["parts"] for c in p["checks"]}
    assert {cid: checks[cid]["status"] for cid in expect.get("checks", {})} == \
        expect.get("checks", {})
    if "says" in expect:
        assert any(expect["says"] in c["message"] for c in checks.values())


@pytest.mark.slow
def test_every_attacker_is_flagged_for_review_and_no_classmate_is(
        batch: dict[str, Any]) -> None:
    """Every attack but idling, which takes no construct beyond Python's own (a sleep)."""
    flagged = {name for name, row in batch["rows"].items() if row["flags"]}
    assert flagged == {name for name in NAMES
                       if not name.startswith("honest_") and name != "idle_instead_of_working"}


@pytest.mark.slow
def test_the_batch_was_sandboxed_and_nothing_outlives_it(batch: dict[str, Any]) -> None:
    assert batch["doc"]["sandboxed"] is True
    assert batch["lingering"] == []


@pytest.mark.slow
def test_no_file_outside_a_sandbox_changed(batch: dict[str, Any]) -> None:
    """The grader, its references and every submission's own files, whatever
    deface_everything tried."""
    assert batch["changed"] == []


@pytest.mark.slow
def test_neither_the_secret_nor_a_connection_got_out(batch: dict[str, Any]) -> None:
    assert SECRET not in batch["output"] and SECRET not in batch["csv"]
    assert batch["connections"] == 0
    printed = "".join(c["message"] for p in batch["rows"]["spy"]["parts"] for c in p["checks"])
    assert "no connection to 127.0.0.1" in printed  # the spy did try


@pytest.mark.slow
@needs_sandbox
def test_check_sandbox_grades_the_same_as_check(grading) -> None:  # type: ignore[no-untyped-def]
    root, boxed = grading.once(checked_in_the_sandbox)
    plain = grading.run(root, "numpy", ["part1", "part3"], seed=5)
    differ = [(mine["id"], mine["status"], mine["message"], theirs.status, theirs.message)
              for mine, theirs in zip((c for p in boxed["parts"] for c in p["checks"]),
                                      (c for p in plain.parts for c in p.checks), strict=True)
              if (mine["id"], mine["status"]) != (theirs.id, theirs.status)]
    assert differ == []


@needs_sandbox
def test_grader_sandbox_says_what_the_sandbox_is_made_of() -> None:
    done = CliRunner(env={"COLUMNS": "100"}).invoke(cli, ["sandbox"])
    assert done.exit_code == 0
    text = " ".join(done.output.split())
    assert f"bubblewrap │ {support().bwrap}: works here" in text
    assert "network (none)" in text and "/tmp: a private tmpfs of 64 MiB" in text


NO_BWRAP = Support(None, False, "bubblewrap is not installed (Debian/Ubuntu: apt-get install "
                   "bubblewrap)", None, "")


@pytest.mark.parametrize("cpu_share", [True, False])
def test_the_sandbox_command_says_what_the_sandbox_is_made_of(cpu_share: bool) -> None:
    from io import StringIO

    from rich.console import Console

    from grader.render.instructor_report import render_sandbox

    console = Console(file=StringIO(), width=100, color_system=None)
    render_sandbox(console, Support("/usr/bin/bwrap", True, "", "v1", "", cpu_share))
    share = ("one CPU share for all its processes, as one process has" if cpu_share else
             "no CPU share of its own (no cpu controller here): its processes compete for the "
             "CPU one by one")
    assert " ".join(console.file.getvalue().replace("│", " ").split()) == " ".join(f"""
        The sandbox on this machine
        ┌────────────┬─────────────────────────────────────────────────────────────────────────────────────┐
        bubblewrap /usr/bin/bwrap: works here
        namespaces its own users (nobody inside, no capabilities), PIDs, network (none), IPC, UTS
        and cgroups
        files read-only: the system, Python, the grader without its references, the submission's
        own files; /tmp: a private tmpfs of 64 MiB
        limits a cgroup (v1) for the whole sandbox: the request's memory + 1536 MiB for the
        grader's side, 256 tasks, and {share}
        lifetime killed with everything in it when its submission is graded
        └────────────┴─────────────────────────────────────────────────────────────────────────────────────┘
        """.split())


@pytest.mark.parametrize(("args", "says"), [
    (["sandbox"], "no sandbox on this machine: bubblewrap is not installed"),
    (["grade", "."], "pass --no-sandbox to grade without one"),
    (["check", "--sandbox"], "run `grader check --no-sandbox`"),
])
def test_without_a_sandbox_each_command_says_why_and_what_to_do(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path, args: list[str], says: str) -> None:
    monkeypatch.setattr(sandbox, "support", lambda: NO_BWRAP)
    monkeypatch.chdir(write_workspace(tmp_path / "ws", "numpy"))
    done = CliRunner(env={"COLUMNS": "200"}).invoke(cli, args)
    assert done.exit_code == 1
    assert says in " ".join(done.output.split())
    assert "Traceback" not in done.output


def test_check_without_a_sandbox_here_says_so_once_and_grades_in_plain_processes(
        runner: CliRunner, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(sandbox, "support", lambda: NO_BWRAP)
    asked: list[dict[str, Any]] = []
    lend = grader.runner.Worker
    monkeypatch.setattr(grader.runner, "Worker", lambda **kw: asked.append(kw) or lend())
    monkeypatch.chdir(write_workspace(tmp_path / "ws", "numpy"))
    done = runner.invoke(cli, ["check", "part2"])
    assert done.exit_code == 0, done.output
    assert done.output.count("note: no sandbox here (bubblewrap is not installed") == 1
    assert asked == [{}]


def in_a_sandbox(round_: Any, workspace: Path, script: str,
                 *args: str) -> subprocess.CompletedProcess[str]:
    """`python -c script args...` in a sandbox made as grading makes one (its namespaces,
    system, files and environment), without the executor."""
    import sys

    bwrap = support().bwrap or "bwrap"
    done = run_owned([bwrap, *sandbox._namespace_args(bwrap),
                      *sandbox._system_args(), *sandbox.file_args(workspace, round_),
                      *sandbox.environment_args(), sys.executable, "-c", script, *args],
                     timeout=60)
    assert done.returncode == 0, done.stderr
    return done


@needs_sandbox
@pytest.mark.parametrize("round_id", ["prefix-products", "gradient-check", "autograd-pitfalls"])
@pytest.mark.parametrize("around", [False, True], ids=["workspace-apart", "workspace-around"])
def test_a_sandbox_shows_only_the_candidate_side_of_the_grader(round_id: str, around: bool,
                                                               tmp_path: Path) -> None:
    """Listed from inside a real sandbox: of the grader's package, the round's folder and its
    references, nothing but the files the executor and the probes import, so no truth, mistake
    simulator, check kind, reference or command can be imported, read or called from candidate
    code; and every folder of the grader is read-only there. Also when the workspace is the
    folder that holds the grader (this repo's own exercises/, as the README's first line grades
    them), whose bind must not uncover what the sandbox hides."""
    from grader.engine.rounds import get_round

    round_ = get_round(round_id)
    package = Path(grader.__file__).resolve().parent
    workspace = package.parent if around else tmp_path
    folders = [str(package), str(round_.folder.resolve()),
               *(str(round_.reference_dir(f).resolve()) for f in round_.flavors)]
    script = ("import os, sys\n"
              "for top in sys.argv[1:]:\n"
              "    for folder, _, files in os.walk(top):\n"
              "        for name in files: print(os.path.join(folder, name))\n"
              "    try:\n"
              "        open(os.path.join(top, 'planted.py'), 'w')\n"
              "        print('WROTE', top)\n"
              "    except OSError:\n"
              "        pass\n")
    done = in_a_sandbox(round_, workspace, script, *folders)
    seen = set(done.stdout.split())
    assert "WROTE" not in done.stdout
    shown = {str(p) for p in sandbox.candidate_files(round_)}
    assert seen == shown
    names = {Path(p).name for p in seen}
    assert not names & {"checks.py", "checks.toml", "kinds.py", "mistakes.py", "cli.py",
                        "worker.py", "references.py"}
    assert "probes.py" in names and "executor.py" in names


@needs_sandbox
def test_folders_that_pth_files_add_are_there_and_the_checkout_is_not(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An environment whose packages sit behind a .pth line (a venv reaching another's
    site-packages, here under /tmp, which the sandbox covers with its own tmpfs) imports them in
    the sandbox too; a .pth line naming any other folder (the checkout that holds the grader,
    as an editable install's does, or a home folder) uncovers nothing; comments, `import` lines
    and missing folders are read as `site` reads them."""
    from grader.engine.rounds import get_round

    site_folder = tmp_path / "site-packages"
    packages = tmp_path / "outer" / "lib" / "site-packages"
    home = tmp_path / "home"
    for folder in (site_folder, packages, home):
        folder.mkdir(parents=True)
    (packages / "behind_a_pth.py").write_text("ANSWER = 42\n")
    (home / "secret.txt").write_text("the coach's\n")
    source = Path(grader.__file__).resolve().parent.parent
    (site_folder / "outer.pth").write_text(
        f"# a comment\nimport os\n../outer/lib/site-packages\n{tmp_path / 'missing'}\n"
        f"{source}\n{home}\n")
    monkeypatch.setattr(sandbox, "_site_folders",
                        lambda: {*sandbox.site.getsitepackages(), str(site_folder)})
    script = ("import os, site, sys\n"
              "site.addsitedir(sys.argv[1])\n"
              "import behind_a_pth\n"
              "print(behind_a_pth.ANSWER, os.path.exists(os.path.join(sys.argv[2], 'tests')),\n"
              "      os.path.exists(sys.argv[3]))\n")
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    done = in_a_sandbox(get_round("prefix-products"), workspace, script, str(site_folder),
                        str(source), str(home / "secret.txt"))
    assert done.stdout.split() == ["42", "False", "False"]
    assert sandbox._pth_folders({str(site_folder)}) == {str(packages.resolve())}


@needs_sandbox
def test_every_writable_place_in_a_sandbox_is_capped(tmp_path: Path) -> None:
    """/tmp and /dev/shm hold TMP_MB each, no more: a submission cannot fill the machine's
    memory through a tmpfs (the cgroup's memory cap aside)."""
    from grader.engine.rounds import get_round

    script = ("import sys\n"
              "for place in sys.argv[1:]:\n"
              "    written = 0\n"
              "    try:\n"
              "        with open(place + '/fill', 'wb') as out:\n"
              f"            for _ in range({5 * sandbox.TMP_MB}):\n"
              "                out.write(bytes(1 << 20)); out.flush(); written += 1\n"
              "    except OSError:\n"
              "        pass\n"
              "    print(place, written)\n")
    done = in_a_sandbox(get_round("prefix-products"), tmp_path, script, *sandbox.WRITABLE)
    written = dict(line.split() for line in done.stdout.splitlines())
    assert set(written) == set(sandbox.WRITABLE)
    assert all(int(mb) <= sandbox.TMP_MB for mb in written.values()), written


NAMESPACES = """\
import ctypes, errno
libc = ctypes.CDLL(None, use_errno=True)
for name, flag in (("user", 0x10000000), ("uts", 0x04000000), ("net", 0x40000000)):
    made = libc.unshare(flag) == 0
    print(name, "made" if made else errno.errorcode[ctypes.get_errno()])
"""


@needs_sandbox
def test_code_in_a_sandbox_can_make_no_namespace_of_its_own(tmp_path: Path) -> None:
    """A user namespace of its own would give the code the capabilities to make any other,
    and the machine counts namespaces per user: a submission holding thousands (UTS ones,
    say) left a classmate graded beside it no sandbox at all. bwrap's --disable-userns (0.8
    and later) closes the first step, and without it the code has no capability to make the
    others."""
    from grader.engine.rounds import get_round

    if not sandbox._closing_user_namespaces(support().bwrap or "bwrap"):
        pytest.skip("this bubblewrap has no --disable-userns (0.8 and later)")
    done = in_a_sandbox(get_round("prefix-products"), tmp_path, NAMESPACES)
    made = dict(line.split() for line in done.stdout.splitlines())
    assert set(made) == {"user", "uts", "net"} and "made" not in made.values(), made


def compiled_and_startup_files() -> dict[str, str]:
    """The grader's compiled files, and every .pth and sitecustomize file where Python looks
    for them, by content: what a poisoning would change for the next run."""
    import site
    import sys

    found = {str(p): hashlib.sha256(p.read_bytes()).hexdigest()
             for p in Path(grader.__file__).resolve().parent.rglob("*.pyc")}
    for folder in {*sys.path, *site.getsitepackages(), site.getusersitepackages()}:
        if folder and Path(folder).is_dir():
            for path in Path(folder).iterdir():
                if path.suffix == ".pth" or path.stem in ("sitecustomize", "usercustomize"):
                    found[str(path)] = hashlib.sha256(path.read_bytes()).hexdigest()
    return found


def compiled_from_its_source(path: str) -> bool:
    """Whether `path` is a compiled file Python itself would write: under __pycache__, for
    this interpreter, its code that of its source file compiled."""
    import importlib.util
    import marshal

    compiled = Path(path)
    source = compiled.parent.parent / (compiled.name.split(".")[0] + ".py")
    if compiled.parent.name != "__pycache__" or not source.is_file():
        return False
    data = compiled.read_bytes()
    if data[:4] != importlib.util.MAGIC_NUMBER:
        return False
    return bool(marshal.loads(data[16:]) == compile(source.read_bytes(), str(source), "exec",
                                                     dont_inherit=True))


@needs_sandbox
def test_a_plain_check_of_a_poisoning_workspace_leaves_the_install_as_it_was(
        tmp_path: Path) -> None:
    """`grader check` sandboxes by default: a workspace that rewrites the grader's compiled
    files and drops .pth files where Python looks for them writes nothing, and is graded on
    its own answer."""
    root = write_workspace(tmp_path / "ws", "torch")
    shutil.copy(ADVERSARIES / "poison_the_install" / "submission" / "part1_inplace.py",
                root / "exercises" / "part1_inplace.py")
    before = compiled_and_startup_files()
    done = run_grader("check", "part1", "--json", "--seed", "2", cwd=root)
    assert done.returncode == 1, done.stdout + done.stderr
    after = compiled_and_startup_files()
    assert set(before) <= set(after)
    # Another process may import a module of this checkout meanwhile, for the first time or
    # after its source changed: the file Python writes then is its source compiled, which no
    # poisoning makes.
    assert [path for path, digest in after.items() if before.get(path) != digest
            and not compiled_from_its_source(path)] == []
    checks = {c["id"]: c["status"] for c in json.loads(done.stdout)["parts"][0]["checks"]}
    assert checks["part1.correctness"] == "passed" and checks["part1.explanation"] == "failed"


@needs_sandbox
def test_nothing_in_a_sandbox_is_writable_but_tmp_and_dev_shm(tmp_path: Path) -> None:
    """Every mount the sandbox is made of, as its own /proc/self/mountinfo lists them, is
    read-only but the two capped tmpfs, /proc, the device nodes bwrap binds (which store
    nothing) and the message-queue mount (emptied once each child ends): the root bwrap makes,
    /dev, the empty tmpfs over the grader and its references, every bind."""
    from grader.engine.rounds import get_round

    script = ("import os, stat\n"
              "for line in open('/proc/self/mountinfo'):\n"
              "    fields = line.split()\n"
              "    if stat.S_ISCHR(os.stat(fields[4]).st_mode) or fields[4] == '/dev/pts':\n"
              "        continue\n"
              "    print(fields[4], fields[5].split(',')[0])\n")
    done = in_a_sandbox(get_round("gradient-check"), tmp_path, script)
    mounts = dict(line.split() for line in done.stdout.splitlines())
    writable = {point for point, mode in mounts.items() if mode == "rw"}
    assert {"/", "/dev", str(tmp_path.resolve())} <= set(mounts)
    assert writable - {"/proc", sandbox.MQUEUE} == set(sandbox.WRITABLE), writable


PROC_WRITES = """\
import os
found = []
for top in sorted(os.listdir('/proc')):
    if top.isdigit() or os.path.islink('/proc/' + top):
        continue
    for folder, subfolders, files in os.walk('/proc/' + top):
        for name in files:
            if os.access(os.path.join(folder, name), os.W_OK):
                found.append(os.path.join(folder, name))
print('writable', len(found), *found[:5])
try:
    open('/proc/sys/kernel/printk_ratelimit_burst', 'w').write('11\\n')
    print('sysctl written')
except OSError as exc:
    print('sysctl refused', type(exc).__name__)
"""


@needs_sandbox
def test_nothing_of_the_machines_in_proc_is_writable_in_a_sandbox(tmp_path: Path) -> None:
    """The red team's sysctl write: code in a sandbox finds no file of the machine's under
    /proc (sysctls, sysrq-trigger, irq affinities, pressure triggers) that it may write, and
    a write to a sysctl is refused, even where the grader runs as root and the sandbox's user
    is root outside."""
    from grader.engine.rounds import get_round

    sysctl = Path("/proc/sys/kernel/printk_ratelimit_burst")
    before = sysctl.read_text()
    try:
        done = in_a_sandbox(get_round("gradient-check"), tmp_path, PROC_WRITES)
    finally:
        after = sysctl.read_text()
        if after != before:
            sysctl.write_text(before)
    assert after == before
    assert done.stdout.splitlines() == ["writable 0", "sysctl refused OSError"], \
        done.stdout + done.stderr


def test_a_stopped_executor_is_continued_and_heard_and_a_traced_one_given_up_at_once() -> None:
    """The stop_the_executor adversary, in the small: an executor stopped by a signal (the
    code's SIGSTOP, a person's, a tool's) before it could answer is continued by the wait, and
    its answer is heard long before the deadline; one held by a tracer, which only its tracer
    ends, ends the wait in ChannelClosed as soon as it is seen (a TimeoutError would mean it
    waited for the deadline)."""
    from grader.runner.channel import ChannelClosed

    ours, theirs = socket.socketpair()
    answers = [sys.executable, "-c", "import socket, sys, time; time.sleep(0.5); "
               "socket.socket(fileno=int(sys.argv[1])).send(b'x'); time.sleep(60)",
               str(theirs.fileno())]
    executor = subprocess.Popen(answers, pass_fds=[theirs.fileno()])
    traced = subprocess.Popen(["sleep", "60"])
    try:
        executor.send_signal(signal.SIGSTOP)
        began = time.monotonic()
        sandbox.wait_for_answer(ours, began + 60, executor.pid)
        assert ours.recv(1) == b"x" and time.monotonic() - began < 30
        held_by_a_tracer(traced.pid)
        with pytest.raises(ChannelClosed):
            sandbox.wait_for_answer(ours, time.monotonic() + 60, traced.pid)
    finally:
        for process in (executor, traced):
            process.kill()
            process.wait()
        ours.close()
        theirs.close()


@needs_sandbox
def test_the_executor_is_found_below_bwrap_and_not_mistaken_for_bwrap(tmp_path: Path) -> None:
    """bwrap's own command line names grader.runner.executor; the pid found must be the
    Python process that runs it."""
    from grader.engine.rounds import get_round
    from grader.runner.protocol import Request

    round_ = get_round("gradient-check")
    root = write_workspace(tmp_path / "ws", "numpy", round_=round_)
    box = sandbox.Sandbox(Request(id="t", root=str(root), round=round_.id, flavor="numpy",
                                  parts=["part1"], seed=1), round_)
    try:
        found = box.wait_ready()._executor
        assert found is not None and found != box.process.pid
        argv = Path(f"/proc/{found}/cmdline").read_bytes().split(b"\0")
        assert argv[0] == os.fsencode(sys.executable) and argv[1:4] == [
            b"-P", b"-m", b"grader.runner.executor"]
    finally:
        box.close()


def _graded_in_one_sandbox(tmp_path: Path, parts: list[str], timeout_s: float = 10.0,
                           **replaced: str) -> list[list[Any]]:
    """gradient-check's references (a part's file replaced by the code given under its id),
    each part graded in turn by the real runner through one sandbox, as a request is: results
    part by part."""
    from grader.engine.rounds import get_round
    from grader.runner.protocol import Request
    from grader.runner.worker import grade_part

    round_ = get_round("gradient-check")
    root = write_workspace(tmp_path / "ws", "numpy", round_=round_)
    for part, code in replaced.items():
        (root / "exercises" / round_.part(part).file).write_text(code)
    request = Request(id="t", root=str(root), round=round_.id, flavor="numpy", parts=parts,
                      seed=1, timeout_s=timeout_s)
    with sandbox.sandboxed_children(request, round_) as spawn:
        return [grade_part(request, round_, round_.part(part), [], spawn, lambda: None)
                for part in parts]


@needs_sandbox
def test_a_sandbox_the_machine_starves_at_start_leaves_every_check_undecided(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A sandbox seen runnable at every look without getting a CPU, until the clock's backstop
    ran out: the machine was too busy, so every check of the request is undecided (points held,
    none earned), the reason said, and no second start is waited for as long again."""
    from grader.runner import children

    monkeypatch.setattr(sandbox, "START_LIMIT_S", 0.3)
    for module in (children, sandbox):
        monkeypatch.setattr(module, "BACKSTOP", 2.0)
    monkeypatch.setattr(strays, "tree_usage", lambda pid, **_: strays.Usage(0.0, True))
    started: list[socket.socket] = []
    plain_init = sandbox.Sandbox.__init__

    def counted(self: sandbox.Sandbox, *args: Any) -> None:
        """The sandbox started, its executor's line swapped for one that stays silent: however
        fast this machine starts it, its `ready` is never heard before the backstop."""
        plain_init(self, *args)
        silent, kept = socket.socketpair()
        started.extend([self.socket, kept])
        self.socket = silent

    monkeypatch.setattr(sandbox.Sandbox, "__init__", counted)
    try:
        results = [r for part in _graded_in_one_sandbox(tmp_path, ["part1", "part2"])
                   for r in part]
    finally:
        for end in started:
            end.close()
    assert len(started) == 2  # one sandbox started, no second one waited for
    assert {(r.status, r.score) for r in results} == {("undecided", 0.0)}
    assert all(r.max_score > 0 for r in results)
    assert {r.message for r in results} == {
        "not run: the machine was too busy to judge this: re-run when it is quieter (the "
        "sandbox did not start: its executor got too little CPU to be ready within 0.6 s on "
        "the clock)"}


@needs_sandbox
@pytest.mark.parametrize(("runnable", "raised"), [(True, "SandboxStarved"),
                                                   (False, "TimeoutError")])
def test_the_end_of_a_child_is_waited_for_by_the_sandboxs_work(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, runnable: bool, raised: str) -> None:
    """An executor that has not answered `end`: seen runnable without getting a CPU, it is
    waited for up to the clock's backstop and then reported starved (the machine was too busy);
    seen asleep, it has idled through its limit (wedged) and is given up on as before."""
    from grader.engine.rounds import get_round
    from grader.runner import children
    from grader.runner.protocol import Request

    round_ = get_round("gradient-check")
    root = write_workspace(tmp_path / "ws", "numpy", round_=round_)
    box = sandbox.Sandbox(Request(id="t", root=str(root), round=round_.id, flavor="numpy",
                                  parts=["part1"], seed=1), round_).wait_ready()
    monkeypatch.setattr(sandbox, "END_LIMIT_S", 0.2)
    for module in (children, sandbox):
        monkeypatch.setattr(module, "BACKSTOP", 3.0)
    monkeypatch.setattr(strays, "tree_usage", lambda pid, **_: strays.Usage(0.0, runnable))
    began = time.monotonic()
    try:
        with pytest.raises((sandbox.SandboxStarved, TimeoutError)) as caught:
            box.ended()  # asked nothing: no answer comes
    finally:
        box.close()
    assert type(caught.value).__name__ == raised
    if runnable:
        assert str(caught.value) == ("its executor got too little CPU to end a child within "
                                     "0.6 s on the clock")
    assert time.monotonic() - began >= (3.0 if runnable else 1.0) * 0.2 - 0.05


@needs_sandbox
def test_a_sandbox_too_starved_to_end_a_child_leaves_the_rest_undecided(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The first child's checks keep the verdicts its frames brought; once its sandbox could
    not end it for want of CPU, every check not run yet is undecided, and no other sandbox is
    started to wait as long again."""

    def starved(self: sandbox.Sandbox) -> None:
        raise sandbox.SandboxStarved("its executor got too little CPU to end a child within "
                                     "40 s on the clock")

    monkeypatch.setattr(sandbox.Sandbox, "ended", starved)
    first, second = _graded_in_one_sandbox(tmp_path, ["part1", "part2"])
    assert {r.status for r in first} == {"passed"}  # the references: one child, all judged
    assert {(r.status, r.score, r.message) for r in second} == {(
        "undecided", 0.0, "not run: the machine was too busy to judge this: re-run when it is "
        "quieter (its executor got too little CPU to end a child within 40 s on the clock)")}


@needs_sandbox
def test_candidate_code_in_a_sandbox_runs_in_the_grading_environment(tmp_path: Path) -> None:
    """The sandbox's environment is its own (none of the judge's), yet it holds what every
    grading process is given (runner.process_env): a part 1 that raises at import without it
    passes every check."""
    from grader.engine.rounds import get_round

    reference = get_round("gradient-check").reference_file(
        get_round("gradient-check").part("part1"), "numpy")
    ((*checks,),) = _graded_in_one_sandbox(
        tmp_path, ["part1"], part1=needing_the_grading_environment(reference.read_text()))
    assert {c.status for c in checks} == {"passed"}


SANDBOX_MEMORY_MIB = 450
"""A sandbox's own memory limit for the test below: room for its executor (torch), none for a
call that takes 600 MiB."""


@needs_sandbox
@pytest.mark.slow
def test_code_that_fills_its_own_sandbox_errs_where_the_machine_would_hold_its_points(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The counterpart of the machine running out of memory (tests/test_busy_machine.py, where
    such checks are undecided): a call that takes 600 MiB, within what a process may hold, in a
    sandbox whose own limit it passes, is ended by the out-of-memory killer while the sandbox's
    own count rises, and the checks it ended are errors that say the memory it may hold ran
    out, none undecided."""
    if sandbox.support().cgroup is None:
        pytest.skip("no cgroup for the sandbox here: its memory has no limit of its own")
    monkeypatch.setattr(sandbox, "EXECUTOR_MB", SANDBOX_MEMORY_MIB - DEFAULT_MEMORY_MB)
    from grader.engine.rounds import get_round

    round_ = get_round("gradient-check")
    reference = round_.reference_file(round_.part("part1"), "numpy").read_text()
    greedy = reference + (
        "\n\n_plain = numerical_gradient\n\n\n"
        "def numerical_gradient(*args, **kwargs):\n"
        "    held = b'1' * (600 << 20)\n"
        "    return _plain(*args, **kwargs) if held else None\n")
    ((*checks,),) = _graded_in_one_sandbox(tmp_path, ["part1"], part1=greedy)
    ended = [c for c in checks if "out-of-memory killer" in c.message]
    assert ended
    assert {c.status for c in ended} == {"error"}
    assert all("(the memory it may hold ran out)" in c.message for c in ended)
    assert "undecided" not in {c.status for c in checks}


SYSV_SEGMENT = """
import ctypes
_libc = ctypes.CDLL(None, use_errno=True)
_found = _libc.shmget(0x67726164, 0, 0)
"""


POSIX_QUEUE_AND_KEY = """
_rt = ctypes.CDLL("librt.so.1", use_errno=True)
_KEYCTL = {"x86_64": 250, "aarch64": 219}[__import__("os").uname().machine]
_ADD_KEY = {"x86_64": 248, "aarch64": 217}[__import__("os").uname().machine]
"""


@needs_sandbox
def test_no_child_finds_the_shared_memory_an_earlier_one_made(tmp_path: Path) -> None:
    """System V shared memory outlives its process like a file in /tmp, and so does a POSIX
    message queue: what part 1's child made at import (a segment, a message queue, a semaphore
    set, a POSIX queue) is gone by the time part 2's child looks for it, in the same sandbox. A
    key in the keyrings the children share would outlive it too (and count against the user's
    quota, machine-wide): no child can add one, to its user keyring or its persistent one, and
    none is found there."""
    from grader.engine.rounds import get_round

    round_ = get_round("gradient-check")
    made = SYSV_SEGMENT + POSIX_QUEUE_AND_KEY + (
        "assert _found == -1\n"
        "assert _libc.shmget(0x67726164, 4096, 0o1600) >= 0\n"
        "assert _libc.msgget(0x67726164, 0o1600) >= 0\n"
        "assert _libc.semget(0x67726164, 1, 0o1600) >= 0\n"
        "assert _rt.mq_open(b'/answer', 0o100 | 0o2, 0o600, None) >= 0\n"  # O_CREAT | O_RDWR
        "assert _libc.syscall(_ADD_KEY, b'user', b'answer', b'42', 2, -4) == -1\n"
        "assert _libc.syscall(_KEYCTL, 22, -1, -2) == -1\n")  # the persistent keyring
    looked = SYSV_SEGMENT + POSIX_QUEUE_AND_KEY + (
        "assert _found == -1, 'a segment is still here'\n"
        "assert _libc.msgget(0x67726164, 0) == -1, 'a queue is here'\n"
        "assert _libc.semget(0x67726164, 0, 0) == -1, 'semaphores are here'\n"
        "assert _rt.mq_open(b'/answer', 0o2, 0, None) == -1, 'a POSIX queue is here'\n"
        "assert _libc.syscall(_KEYCTL, 10, -4, b'user', b'answer', 0) == -1, 'a key is here'\n"
        "_kept = _libc.syscall(_KEYCTL, 22, -1, -2)\n"
        "assert _kept == -1 or _libc.syscall(_KEYCTL, 10, _kept, b'user', b'kept', 0) == -1, "
        "'a persistent key is here'\n")
    code = {part: round_.reference_file(round_.part(part), "numpy").read_text()
            + (made if part == "part1" else looked) for part in ("part1", "part2")}
    first, second = _graded_in_one_sandbox(tmp_path, ["part1", "part2"], **code)
    assert {c.status for c in first} == {"passed"}, [c.message for c in first]
    assert {c.status for c in second} == {"passed"}, [c.message for c in second]


@needs_sandbox
def test_no_child_reads_what_an_earlier_one_set_on_the_writable_places_themselves(
        tmp_path: Path) -> None:
    """/tmp and /dev/shm are emptied between children, and put back as made: an extended
    attribute, the times or the mode part 1's child set on the folders themselves are gone
    when part 2's child looks."""
    from grader.engine.rounds import get_round

    round_ = get_round("gradient-check")
    made = ("\nimport os as _os\n"
            "for _place in ('/tmp', '/dev/shm'):\n"
            "    try:\n"
            "        _os.setxattr(_place, 'user.answer', b'42')\n"
            "    except OSError:\n"
            "        pass\n"
            "    _os.utime(_place, (123456, 123456))\n"
            "    _os.chmod(_place, 0o1700)\n")
    looked = ("\nimport os as _os\n"
              "for _place in ('/tmp', '/dev/shm'):\n"
              "    assert 'user.answer' not in _os.listxattr(_place), 'an attribute is here'\n"
              "    assert _os.stat(_place).st_mtime != 123456, 'the times are as set'\n"
              "    assert _os.stat(_place).st_mode & 0o777 != 0o700, 'the mode is as set'\n")
    code = {part: round_.reference_file(round_.part(part), "numpy").read_text()
            + (made if part == "part1" else looked) for part in ("part1", "part2")}
    first, second = _graded_in_one_sandbox(tmp_path, ["part1", "part2"], **code)
    assert {c.status for c in first} == {"passed"}, [c.message for c in first]
    assert {c.status for c in second} == {"passed"}, [c.message for c in second]


@needs_sandbox
def test_no_child_reaches_the_first_process_of_its_sandbox(tmp_path: Path) -> None:
    """The red team's store across children: the sandbox's first process (the executor itself,
    bwrap installing no reaper of its own) is undumpable, so code opens none of its files
    (its stderr, a file on the machine's disk outside the sandbox), reads none of its memory,
    and cannot stop or kill it: part 2's child finds nothing part 1's could have left there,
    and the sandbox goes on grading."""
    import signal as _signal

    from grader.engine.rounds import get_round

    round_ = get_round("gradient-check")
    tried = ("\nimport os as _os, signal as _signal\n"
             "_reached = []\n"
             "for _path, _mode in (('/proc/1/fd/2', _os.O_WRONLY),\n"
             "                     ('/proc/1/fd/2', _os.O_RDONLY),\n"
             "                     ('/proc/1/mem', _os.O_RDONLY),\n"
             "                     ('/proc/1/environ', _os.O_RDONLY)):\n"
             "    try:\n"
             "        _os.close(_os.open(_path, _mode))\n"
             "        _reached.append(_path)\n"
             "    except OSError:\n"
             "        pass\n"
             "assert not _reached, f'opened {_reached}'\n"
             f"for _number in ({int(_signal.SIGSTOP)}, {int(_signal.SIGKILL)}):\n"
             "    try:\n"
             "        _os.kill(1, _number)\n"
             "    except OSError:\n"
             "        pass\n")
    code = {part: round_.reference_file(round_.part(part), "numpy").read_text() + tried
            for part in ("part1", "part2")}
    first, second = _graded_in_one_sandbox(tmp_path, ["part1", "part2"], **code)
    assert {c.status for c in first} == {"passed"}, [c.message for c in first]
    assert {c.status for c in second} == {"passed"}, [c.message for c in second]


@needs_sandbox
def test_a_sandbox_competes_for_the_cpu_as_one_process(tmp_path: Path) -> None:
    """Where this machine has the cpu controller, the sandbox's processes share one CPU weight
    (a cgroup of their own in the cpu hierarchy): code that starts many spinning processes
    takes no more of the CPU from the grader, a classmate's sandbox or the rest of the machine
    than one process would."""
    from grader.engine.rounds import get_round
    from grader.runner.protocol import Request

    round_ = get_round("gradient-check")
    root = write_workspace(tmp_path / "ws", "numpy", round_=round_)
    box = sandbox.Sandbox(Request(id="t", root=str(root), round=round_.id, flavor="numpy",
                                  parts=["part1"], seed=1), round_).wait_ready()
    try:
        if box.cgroup is None:
            pytest.skip("no cgroup can be made here")
        if not box.cgroup.shares_cpu:
            pytest.skip("no cpu controller for this process's cgroups here")
        assert support().cpu_share
        shared = [f for f in box.cgroup.folders
                  if (f / "cpu.shares").exists() or (f / "cpu.weight").exists()]
        assert str(box._executor) in (shared[0] / "cgroup.procs").read_text().split()
    finally:
        box.close()
    assert not shared[0].exists()  # removed with the sandbox


@needs_sandbox
def test_a_sandbox_whose_executor_stops_answering_is_timed_by_what_it_uses(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The executor answers the first usage query, then none in time (a busy machine, or
    spinning code crowding it out of its own sandbox): the sandbox seen from outside stands in,
    so a spinning hang still uses up its CPU limit and times out for that reason, not on the
    clock."""

    answered = sandbox.Sandbox.usage
    asked: list[int] = []

    def first_only(self: sandbox.Sandbox) -> Any:
        asked.append(1)
        if len(asked) > 2:
            raise TimeoutError
        return answered(self)

    monkeypatch.setattr(sandbox.Sandbox, "usage", first_only)
    ((first, *_),) = _graded_in_one_sandbox(tmp_path, ["part1"], timeout_s=1.0,
                                            part1="while True:\n    pass\n")
    assert len(asked) > 2
    assert first.status == "timeout", first.message
    assert "within 1 s of CPU time" in first.message


@needs_sandbox
@pytest.mark.parametrize("starved", [True, False])
def test_a_starting_sandbox_is_timed_by_its_work_not_the_clock(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, starved: bool) -> None:
    """With a start limit far below what importing torch costs (and the clock's backstop far
    away, whatever the load): a sandbox whose processes are seen runnable without getting a CPU
    (a machine too busy for it) is waited for and starts; one that is seen computing is
    stopped once its CPU time passes the limit, and says so."""
    from grader.engine.rounds import get_round
    from grader.runner import children
    from grader.runner.protocol import Request

    monkeypatch.setattr(sandbox, "START_LIMIT_S", 0.3)
    monkeypatch.setattr(children, "BACKSTOP", 1000.0)
    if starved:
        monkeypatch.setattr(strays, "tree_usage", lambda pid, **_: strays.Usage(0.0, True))
    round_ = get_round("gradient-check")
    root = write_workspace(tmp_path / "ws", "numpy", round_=round_)
    box = sandbox.Sandbox(Request(id="t", root=str(root), round=round_.id, flavor="numpy",
                                  parts=["part1"], seed=1), round_)
    try:
        if starved:
            assert box.wait_ready()._executor is not None
        else:
            with pytest.raises(sandbox.SandboxError) as raised:
                box.wait_ready()
            assert str(raised.value) == ("the sandbox did not start: its executor used 0.3 s "
                                         "of CPU without getting ready")
    finally:
        box.close()


LOOKING_FOR_ITS_INPUTS = '''\
"""total(x), and what this process could find of its call's inputs at import and in the call:
every object the collector tracks, every frame of every thread, and the process's memory where
it may read it, searched for the case's label (which the judge hands the probe with the
inputs)."""
import gc
import re
import sys

import numpy as np

LABEL = re.compile(rb"call-args-[0-9a-f]{16}")


def _in_objects():
    for obj in gc.get_objects():
        values = obj.values() if isinstance(obj, dict) else obj \\
            if isinstance(obj, (list, tuple)) else ()
        if any(isinstance(v, str) and LABEL.fullmatch(v.encode()) for v in values):
            return True
    frames = list(sys._current_frames().values())
    while frames:
        frame = frames.pop()
        if any(isinstance(v, str) and LABEL.fullmatch(v.encode())
               for v in frame.f_locals.values()):
            return True
        frames += [frame.f_back] if frame.f_back is not None else []
    return False


def _in_memory():
    """None where this process may not read its own memory."""
    try:
        maps, mem = open("/proc/self/maps"), open("/proc/self/mem", "rb", 0)
    except OSError:
        return None
    with maps, mem:
        for line in maps:
            fields = line.split()
            if fields[1].startswith("rw") and (len(fields) < 6 or fields[5] == "[heap]"):
                start, end = (int(a, 16) for a in fields[0].split("-"))
                try:
                    mem.seek(start)
                    if LABEL.search(mem.read(end - start)):
                        return True
                except (OSError, OverflowError, ValueError):
                    continue
    return False


AT_IMPORT = (_in_objects(), _in_memory())


def total(x):
    return np.array([*AT_IMPORT, _in_objects(), _in_memory()], dtype=object)
'''


@needs_sandbox
def test_no_call_s_inputs_are_in_the_candidate_s_process_before_that_call(
        tmp_path: Path) -> None:
    """A call's arguments reach its child only when the judge releases that call, after the
    candidate's file is imported: a file that searches its whole heap, every thread's frames
    and its own memory at import finds nothing of them (so it cannot work on them where no
    timer, counter or watch is looking), while the same search in the call finds them (the
    search works). Two calls in one child: the second's arguments are not there during the
    first."""
    from grader.checks.base import Plan, passed

    seen: list[list[Any]] = []

    def judge(observed: list[dict[str, Any]]) -> Any:
        seen.append([None if v is None else bool(v) for v in observed[0]["value"]])
        return passed("searched")

    labels = [f"call-args-{os.urandom(8).hex()}" for _ in range(2)]
    plans = [Plan("call_each", {"function": "total", "args": ["x"], "returns": "tree",
                                "cases": [{"inputs": {"x": [1.0]}, "label": label,
                                           "extra": {}}]}, judge) for label in labels]
    results = run_tiny_sandboxed(tmp_path, plans, code=LOOKING_FOR_ITS_INPUTS)
    assert [r.status for r in results] == ["passed", "passed"], results
    found_at_import = [s[:2] for s in seen]
    found_in_call = [s[2:] for s in seen]
    assert all(not any(f) for f in found_at_import), seen
    assert all(objects for objects, _ in found_in_call), seen


@needs_sandbox
def test_work_in_processes_the_kernel_reaps_unasked_is_counted_by_the_sandboxs_cgroup(
        tmp_path: Path) -> None:
    """Code whose work runs in short-lived processes that nobody waits for (their parent
    ignores SIGCHLD: the kernel reaps them at once, and their CPU time reaches no parent) looks
    from /proc like a tree that is runnable yet charged nothing, as a child a busy machine
    starves does. The sandbox's cgroup counts that time: the check times out on its CPU time,
    the code's doing, not `undecided` (which would hide a hang behind "re-run")."""
    from grader.checks.base import Plan, passed

    if support().cgroup is None:
        pytest.skip("no cgroup can be made for a sandbox here")
    plan = Plan("round:spin_unreaped", {"seconds": 60.0}, lambda data: passed(data))
    (result,) = run_tiny_sandboxed(tmp_path, [plan], timeout_s=1.0)
    assert (result.status, result.message.split(";")[0]) == (
        "timeout", "did not finish within 1 s of CPU time (an infinite loop, or far more work "
        "than needed?)"), result.message


@needs_sandbox
def test_code_that_lowers_its_executors_priority_with_its_own_times_out_as_its_own(
        tmp_path: Path) -> None:
    """Code in a sandbox that lowers its executor's priority (its parent: the same user; the
    filter refuses it now, and the rest stands where it would not) and then its own, beside a
    core another process keeps busy: the executor, at the same low priority, would read the
    code's wait for a CPU as a starved one. The worker, out of the code's reach, reads the
    sandbox at its own priority, so the check times out as the code's doing, never
    `undecided`."""
    from grader.checks.base import Plan, passed

    cpu = min(os.sched_getaffinity(0))
    plan = Plan("round:spin_yielded", {"policy": "parent", "cpu": cpu, "seconds": 60.0},
                lambda data: passed(data))
    with spinning(cpu=cpu):
        (result,) = run_tiny_sandboxed(tmp_path, [plan], timeout_s=1.0)
    assert result.status == "timeout", result.message



@pytest.mark.parametrize("said", ["Can't create signalfd: Too many open files in system",
                                  "Can't fork: Resource temporarily unavailable",
                                  "Creating new namespace failed: Cannot allocate memory",
                                  "python: error while loading shared libraries: libc.so.6: "
                                  "cannot open shared object file: Error 23"])
def test_a_machine_short_of_files_processes_or_memory_for_a_moment_is_no_lasting_answer(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, said: str) -> None:
    """Whether a sandbox can be made here is found by trying once per process and kept: a try
    the machine refused for want of a file (its table of open files full: a classmate's
    sandbox can fill it), a process or memory is tried again, and the answer kept is the one
    the machine gives once it has them; a bwrap that fails for another reason is the answer.
    A sandbox that cannot start for such a want is starved (the machine's doing: undecided),
    never the code's error."""
    tries = tmp_path / "tries"
    fake = tmp_path / "bwrap"
    fake.write_text("#!/bin/sh\n"
                    "case \"$*\" in *--help*) exit 0;; esac\n"
                    f"echo x >> {tries}\n"
                    f"[ $(wc -l < {tries}) -le 2 ] && {{ echo \"bwrap: {said}\" >&2; exit 1; }}\n"
                    "exit 0\n")
    fake.chmod(0o755)
    monkeypatch.setattr(sandbox.shutil, "which", lambda name: str(fake))
    monkeypatch.setattr(sandbox.Cgroup, "make", classmethod(
        lambda cls, *args: (_ for _ in ()).throw(sandbox.SandboxError("no cgroup in this test"))))
    support.cache_clear()
    try:
        found = support()
        assert found.usable and found.bwrap == str(fake), found
        assert len(tries.read_text().splitlines()) == 3
        tries.write_text("")
        fake.write_text(fake.read_text().replace(said, "No permissions to create new namespace"))
        support.cache_clear()
        assert not support().usable
        assert len(tries.read_text().splitlines()) == 1
    finally:
        support.cache_clear()
    assert strays.machine_short(f"the sandbox did not start: bwrap: {said}")
    assert not strays.machine_short("bwrap: No permissions to create new namespace")
    assert not strays.machine_short("libfoo.so: cannot open shared object file: Error 230")


def test_a_wipe_empties_a_tree_of_any_depth_and_mode_and_follows_no_link(tmp_path: Path) -> None:
    """What a child leaves in a writable place is removed before the next child starts, however
    it was laid out: a chain of folders deeper than a recursion can walk, folders made
    unreadable and unwritable, a folder of hundreds of folders; a link to a folder elsewhere is
    removed, never what it points at."""
    from grader.runner.executor import _wipe

    place, elsewhere = tmp_path / "tmp", tmp_path / "elsewhere"
    place.mkdir()
    elsewhere.mkdir()
    (elsewhere / "kept").write_text("not the sandbox's")
    here = os.open(place, os.O_RDONLY)
    for level in range(1500):  # deeper than the interpreter's recursion limit
        os.mkdir("d", dir_fd=here)
        down = os.open("d", os.O_RDONLY, dir_fd=here)
        os.close(here)
        here = down
        if level % 500 == 0:
            os.close(os.open("answer", os.O_CREAT | os.O_WRONLY, dir_fd=here))
    os.close(here)
    for k in range(300):
        (place / "wide" / str(k)).mkdir(parents=True)
    (place / "shut" / "inner").mkdir(parents=True)
    (place / "shut" / "inner" / "answer").write_text("42")
    (place / "shut" / "inner").chmod(0)
    (place / "shut").chmod(0o500)
    (place / "link").symlink_to(elsewhere, target_is_directory=True)
    (place / "note").write_text("for the next child")
    _wipe({str(place): 0o1777})
    assert os.listdir(place) == []
    assert (elsewhere / "kept").read_text() == "not the sandbox's"
