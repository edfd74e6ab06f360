"""What a round's probes.py, which runs in the candidate's process, may use of the engine: see
grader.round_api. Nothing here imports the judge's modules."""

from grader.probes.api import Api, Raised, as_dict
from grader.probes.autograd import (
    count_autograd_runs,
    custom_function,
    leaf,
    run_gradcheck,
    spying_on_the_engine,
)
from grader.probes.backends import CandidateFault
from grader.references import load_reference_part
from grader.rounds import Round, load_module
from grader.timing import CudaStopwatch, Stopwatch, measure, steady_host_allocator

__all__ = [
    "Api", "CandidateFault", "CudaStopwatch", "Raised", "Round", "Stopwatch", "as_dict",
    "count_autograd_runs", "custom_function", "leaf", "load_module", "load_reference_part",
    "measure", "run_gradcheck", "spying_on_the_engine", "steady_host_allocator",
]
