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

# No malloc tunables: the heap in transparent huge pages (glibc.malloc.hugetlb=1) makes a fork
# a third cheaper, but a forked child's CPU time bimodal (the same 20 calls of a reference cost
# 0.11 s or 0.25 s, run to run), which a check measuring CPU time cannot tell from work.


def grading_environment(base: dict[str, str]) -> dict[str, str]:
    """`base` with GRADING_ENV over it."""
    return {**base, **GRADING_ENV}
