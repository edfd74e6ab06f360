"""grader: an autograder for the coding rounds of an ML-infrastructure interview loop (prefix
matrix products with a hand-written backward, matmul backward, MLP backprop, gradient
checking, autograd pitfalls), each round a folder of data on one engine.

The package is split by concern: `rounds` (the rounds and their registry), `workspace`
(finding and writing a candidate's files), `runner` (the only code that starts candidate
processes), `checks` (the engine's check kinds and diagnosis), `report` (rendering) and `cli`
(thin click commands).
"""

__version__ = "0.1.0"
DISTRIBUTION = "ml-interview-grader"
"""The name pip knows this package by (pyproject.toml's project.name; the command is `grader`)."""
REPORT_INSTALL = f'pip install "{DISTRIBUTION}[report]"'
"""How to add the cohort report's libraries."""
