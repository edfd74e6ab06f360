"""grader: an autograder for the coding rounds of an ML-infrastructure interview loop (prefix
matrix products with a hand-written backward, matmul backward, MLP backprop, gradient
checking, autograd pitfalls), each round a folder of data on one engine.

The package is split by whose side each piece is on: `engine` (the round model, found from
the rounds' folders, results, limits and the grader's integrity: it knows no round), `checks`
(the check kinds, diagnosis and measurement), `round_api` (the only surface a round imports),
`rounds` (the rounds themselves, each a folder of data), `probes` (what runs beside
candidate code, in its process), `runner` (the only code that starts
candidate processes), `candidate` (check, watch, mock, hints, explain), `coach` (batch
grading, Gradescope, Classroom, review), `render` (scorecards and reports), `cli` (thin
click commands) and `jupyter` (the same commands as IPython magics).
"""

__version__ = "0.1.0"
DISTRIBUTION = "ml-interview-grader"
"""The name pip knows this package by (pyproject.toml's project.name; the command is `grader`)."""
REPORT_INSTALL = f'pip install "{DISTRIBUTION}[report]"'
"""How to add the cohort report's libraries."""


def load_ipython_extension(ipython: object) -> None:
    """`%load_ext grader` in Jupyter or Colab: the %%part and %grader magics
    (grader.jupyter)."""
    from grader.jupyter import load

    load(ipython)
