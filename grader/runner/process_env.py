"""What every grading process's environment holds, defined once: the worker's (added to the
judge's own variables) and a sandbox's executor's (alone, see sandbox.environment_args)."""

from __future__ import annotations

GRADING_ENV = {
    # One thread for every math library: the CPU time a child is charged is then its own work,
    # not a BLAS pool spinning beside it, and candidate code and the reference (timed in the
    # same kind of child) are measured alike in every mode.
    "OMP_NUM_THREADS": "1",
    "OPENBLAS_NUM_THREADS": "1",
    "MKL_NUM_THREADS": "1",
    # Children are forked and may time on CUDA, so nothing before the fork may initialise
    # CUDA: with this, even torch.cuda.is_available() asks NVML instead.
    "PYTORCH_NVML_BASED_CUDA_CHECK": "1",
}

HUGE_PAGES_TUNABLE = "glibc.malloc.hugetlb=1"
"""malloc's heap in transparent huge pages (glibc 2.35 and later; ignored elsewhere): a process
that has imported torch holds some 150 MB of heap, and every fork copies the page tables of
it, 512 times fewer entries in huge pages (a fork and its exit cost about a third less; each
part, baseline and diagnosis is a fork)."""


def grading_environment(base: dict[str, str]) -> dict[str, str]:
    """`base` with GRADING_ENV over it, and the huge-pages tunable added to any glibc tunables
    it already sets."""
    env = {**base, **GRADING_ENV}
    tunables = [t for t in env.get("GLIBC_TUNABLES", "").split(":") if t]
    if HUGE_PAGES_TUNABLE not in tunables:
        env["GLIBC_TUNABLES"] = ":".join([*tunables, HUGE_PAGES_TUNABLE])
    return env
