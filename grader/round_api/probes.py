"""What a round's probes.py, which runs in the candidate's process, may use of the engine: see
grader.round_api. Everything it imports is among the modules a sandbox shows
(grader.runner.sandbox.CANDIDATE_SIDE); the references are the judge's, loaded only by a probe
that runs outside any sandbox (a baseline), when it asks for them."""

from __future__ import annotations

from types import ModuleType
from typing import TYPE_CHECKING

from grader.engine.rounds import Round, load_module
from grader.engine.timing import CudaStopwatch, Stopwatch, measure, steady_host_allocator
from grader.probes.api import Api, Raised, as_dict
from grader.probes.autograd import (
    bound_gradcheck,
    count_autograd_runs,
    custom_function,
    leaf,
    run_gradcheck,
    spying_on_the_engine,
)
from grader.probes.backends import CandidateFault
from grader.probes.depth import numpy_depth, torch_depth

if TYPE_CHECKING:
    from grader.engine.rounds import Part


def load_reference_part(round_: Round, part: Part, flavor: str) -> ModuleType:
    """The round's reference for one part (grader.engine.references), imported on first use."""
    from grader.engine.references import load_reference_part as load

    return load(round_, part, flavor)


__all__ = [
    "Api", "CandidateFault", "CudaStopwatch", "Raised", "Round", "Stopwatch", "as_dict",
    "bound_gradcheck", "count_autograd_runs", "custom_function", "leaf", "load_module",
    "load_reference_part", "measure", "numpy_depth", "run_gradcheck", "spying_on_the_engine",
    "steady_host_allocator", "torch_depth",
]
