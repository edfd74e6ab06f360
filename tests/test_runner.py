"""The runner beyond what a status shows: one worker answering many requests, a grader-side
failure that must not take the worker down, and candidate files always graded as they are on
disk now."""

from __future__ import annotations

import os
import py_compile
import subprocess
import sys
import time
from pathlib import Path

import pytest

from grader.checks.base import Check, Plan, Verdict, passed
from grader.parts import get_part
from grader.results import CheckResult
from grader.runner import GraderCrash, Request
from grader.runner.worker import (
    DEVICE_LOCK,
    DEVICE_SETUP_S,
    _Child,
    device_in_reach,
    device_turn,
    frame_timeout,
    run_plans,
)

from helpers import checks_by_id, write_workspace


def test_a_grader_failure_is_reported_and_the_worker_goes_on(grading, tmp_path: Path) -> None:
    root = write_workspace(tmp_path / "ws", "numpy")
    with pytest.raises(GraderCrash, match="unknown part 'part9'"):
        grading.worker.run(Request(id="bad", root=str(root), flavor="numpy", parts=["part9"],
                                   seed=1))
    result = grading.run(root, "numpy", ["part1"])
    assert result.parts[0].passed


def test_each_request_sees_the_files_as_they_are_now(grading, tmp_path: Path) -> None:
    """Same size, same mtime, a bytecode cache of the old text beside it: still graded fresh.

    Python's bytecode cache trusts (mtime in whole seconds, size); an edit that keeps both (or
    another submission copied over with its timestamps) must not be graded as the old code.
    """
    root = write_workspace(tmp_path / "ws", "numpy")
    part1 = root / "exercises" / "part1_inplace.py"
    right = part1.read_text()
    wrong = right.replace("P[i] = P[i - 1] @ W[i]", "P[i] = W[i] @ P[i - 1]")
    assert wrong != right and len(wrong) == len(right)
    part1.write_text(wrong)
    py_compile.compile(str(part1), doraise=True)
    stamp = part1.stat().st_mtime
    assert checks_by_id(grading.run(root, "numpy", ["part1"]))["part1.correctness"].status \
        == "failed"
    part1.write_text(right)
    os.utime(part1, (stamp, stamp))
    assert checks_by_id(grading.run(root, "numpy", ["part1"]))["part1.correctness"].status \
        == "passed"


def _address_space_capped(api: object) -> bool:
    import resource

    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    return soft != hard


def _cap_report(capped: bool) -> Verdict:
    return passed("capped" if capped else "uncapped")


def _run_plans_here(root: Path, plans: list[Plan], device_ready: bool,
                    timeout_s: float = 10.0) -> list[CheckResult]:
    """Run plans through the real runner from this process (forked children, real limits)."""
    checks = [Check(f"test.plan{i}", f"plan {i}", 1.0, lambda ctx, plan=plan: plan, ("numpy",))
              for i, plan in enumerate(plans)]
    request = Request(id="device", root=str(root), flavor="numpy", parts=["part1"], seed=1,
                      timeout_s=timeout_s)
    return run_plans(request, get_part("part1"), checks, plans, device_ready)


def test_a_probe_that_uses_the_device_runs_without_the_address_space_cap(tmp_path: Path) -> None:
    """cuInit reserves tens of GB of address space and fails under the memory cap, so a probe
    that sets up CUDA must run uncapped, but only that probe and only when CUDA is there."""
    root = write_workspace(tmp_path / "ws", "numpy")
    plans = [Plan(_address_space_capped, _cap_report),
             Plan(_address_space_capped, _cap_report, uses_device=True),
             Plan(_address_space_capped, _cap_report)]
    with_cuda = [r.message for r in _run_plans_here(root, plans, device_ready=True)]
    assert with_cuda == ["capped", "uncapped", "uncapped"]  # lifted for the rest of the child
    without = [r.message for r in _run_plans_here(root, plans, device_ready=False)]
    assert without == ["capped", "capped", "capped"]


def test_a_probe_that_uses_the_device_gets_time_to_set_it_up(tmp_path: Path) -> None:
    root = write_workspace(tmp_path / "ws", "numpy")

    def slow(api: object) -> bool:
        time.sleep(0.8)
        return True

    device_plan = Plan(slow, _cap_report, uses_device=True)
    (ready,) = _run_plans_here(root, [device_plan], device_ready=True, timeout_s=0.3)
    assert ready.status == "passed"
    (absent,) = _run_plans_here(root, [device_plan], device_ready=False, timeout_s=0.3)
    assert absent.status == "timeout"
    assert "did not finish within 0.3 s" in absent.message
    request = Request(id="t", root=str(root), flavor="numpy", parts=["part1"], seed=1,
                      timeout_s=4.0)
    assert frame_timeout(request, device_plan, True) == 4.0 + DEVICE_SETUP_S
    assert frame_timeout(request, Plan(slow, _cap_report), True) == 4.0


def test_the_device_is_in_reach_only_for_torch_without_device_cpu(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    import torch

    def request(flavor: str, device: str) -> Request:
        return Request(id="t", root=str(tmp_path), flavor=flavor, parts=["part4"], seed=1,
                       device=device)

    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    assert device_in_reach(request("torch", "auto"))
    assert device_in_reach(request("torch", "cuda"))
    assert not device_in_reach(request("torch", "cpu"))
    assert not device_in_reach(request("numpy", "auto"))
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    assert not device_in_reach(request("torch", "cuda"))


def _try_device_lock() -> int:
    """Exit status of another process taking the device lock without waiting (0: it got it)."""
    code = ("import fcntl, os, sys\nfd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT)\n"
            "fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)")
    return subprocess.run([sys.executable, "-c", code, str(DEVICE_LOCK)],
                           capture_output=True).returncode


def test_one_grading_process_at_a_time_times_on_the_device(tmp_path: Path) -> None:
    with device_turn(True):
        assert _try_device_lock() != 0
    assert _try_device_lock() == 0
    with device_turn(False):
        assert _try_device_lock() == 0
    # A child forked during the turn does not keep it once the worker gives it back.
    root = write_workspace(tmp_path / "ws", "numpy")

    def slow(api: object) -> bool:
        time.sleep(5)
        return True

    request = Request(id="t", root=str(root), flavor="numpy", parts=["part1"], seed=1)
    with device_turn(True):
        child = _Child(request, get_part("part1"), [Plan(slow, _cap_report)], 0)
    try:
        assert _try_device_lock() == 0
    finally:
        child.end(kill=True)
