"""The engine's public surface for rounds: the only grader modules a round's code imports.

A round's code runs on two sides of the trust boundary, and each side has its module:
- `grader.round_api.judge`, for checks.py and the judge-side helpers beside it: cases,
  verdicts, plans, comparisons, the diagnosis library (mistakes and mutants), the settling of
  measured checks, prose, the round's own files and its references;
- `grader.round_api.probes`, for probes.py, which runs in the candidate's process: the probe
  API, the backends' faults, autograd's instruments, the timers.

Everything else in the engine is private to it (tests/test_round_api.py fails when a round
imports anything else), so it can change without breaking a round written outside the repo.
"""
