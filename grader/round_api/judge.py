"""What a round's judge side (checks.py and the helpers it loads) may use of the engine: see
grader.round_api."""

from grader.checks.base import (
    Context,
    Diagnosis,
    Measured,
    Plan,
    Verdict,
    failed,
    passed,
    skipped,
    undecided,
)
from grader.checks.cases import Case, drawn_sizes, mismatched_inputs, mismatched_shapes, span
from grader.checks.compare import find_mismatch, matches, tree_difference, tree_matches
from grader.checks.followups import unavailable
from grader.checks.growth import backward_sizes, held_size
from grader.checks.kinds import (
    TIMED_RTOL,
    WATCHED_ANSWERS_HINT,
    central_differences,
    explain_error,
    first_line,
    first_unmatched,
    format_raised,
    judge_cases,
    projection_differs,
    raised_verdict,
)
from grader.checks.mistakes import Mistake, diagnose
from grader.checks.mutants import diagnosis as mutant_diagnosis
from grader.checks.settle import settled, spread_out
from grader.engine.prose import error_topic, fill, followups
from grader.engine.references import load_reference_part
from grader.engine.rounds import Round, load_module
from grader.engine.timing import spread_text
from grader.probes.api import Api
from grader.probes.backends import TorchBackend

__all__ = [
    "TIMED_RTOL", "WATCHED_ANSWERS_HINT", "Api", "Case", "Context", "Diagnosis", "Measured",
    "Mistake", "Plan", "Round",
    "TorchBackend", "Verdict", "backward_sizes", "held_size",
    "central_differences", "diagnose", "drawn_sizes", "error_topic", "explain_error",
    "failed", "fill",
    "find_mismatch", "first_line", "first_unmatched", "followups", "format_raised", "judge_cases",
    "load_module", "load_reference_part", "matches", "mismatched_inputs", "mismatched_shapes",
    "mutant_diagnosis",
    "passed", "projection_differs",
    "raised_verdict", "settled", "skipped", "span", "spread_out", "spread_text",
    "tree_difference",
    "tree_matches", "unavailable", "undecided",
]
