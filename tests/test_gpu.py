"""The CUDA side of part4.timing, on a real GPU. Skipped where there is none (the CPU suite
covers every verdict with observations shaped like the child's, and the runner's device
handling with fakes); `bash benchmarks/gpu_check.sh` runs this file first on a GPU machine."""

from __future__ import annotations

import math

import pytest
import torch

from grader.engine.timing import CudaStopwatch, measure

from helpers import checks_by_id, solution, write_workspace

pytestmark = pytest.mark.skipif(
    not torch.cuda.is_available(), reason="needs a CUDA device (benchmarks/gpu_check.sh)")


def timing_on_cuda(grading, tmp_path, files: dict | None = None):  # type: ignore[no-untyped-def]
    root = write_workspace(tmp_path / "ws", "torch", files=files)
    result = grading.run(root, "torch", ["part2", "part4"], device="cuda", timeout_s=10.0)
    return checks_by_id(result)["part4.timing"]


def test_the_reference_scan_passes_timing_on_cuda_with_figures(grading, tmp_path) -> None:  # type: ignore[no-untyped-def]
    timing = timing_on_cuda(grading, tmp_path)
    assert timing.status == "passed", timing.message
    assert timing.max_score > 0 and timing.score == timing.max_score
    assert "(cuda), N=4096, D=32, float32" in timing.message
    for figure in ("your scan forward", "reference scan backward", "GFLOP/s",
                   "scan speedup over sequential forward"):
        assert figure in timing.message


def test_a_python_loop_inside_each_level_fails_timing_on_cuda(grading, tmp_path) -> None:  # type: ignore[no-untyped-def]
    slow = solution("part4_python_loop_scan")
    timing = timing_on_cuda(grading, tmp_path, slow.files("torch"))
    assert timing.status == "failed", timing.message
    assert timing.hint and "one call" in timing.hint


def test_cuda_events_time_device_work_after_a_flush() -> None:
    stopwatch = CudaStopwatch(torch, flush_bytes=64 * 1024 * 1024)
    a = torch.randn(2048, 2048, device="cuda")
    stats = measure(lambda: a @ a, stopwatch, min_repeats=5, budget_s=0.05)
    assert stats.repeats >= 5 and math.isfinite(stats.median) and stats.median > 0
    # 2 * 2048^3 flops take well over a microsecond on any GPU: events measured real work.
    assert stats.median > 1e-6


def test_buffers_made_on_the_cpu_fail_timing_on_cuda_with_a_device_hint(grading, tmp_path) -> None:  # type: ignore[no-untyped-def]
    timing = timing_on_cuda(grading, tmp_path, solution("part4_buffers_on_cpu").files("torch"))
    assert timing.status == "failed", timing.message
    assert ("your scan returned P on cpu and dW on cpu for inputs on cuda: part of it ran "
            "elsewhere") in timing.message
    assert timing.hint and "device=W.device" in timing.hint
