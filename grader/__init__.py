"""grader: an autograder for the prefix-matrix-products autograd interview round.

The package is split by concern: `parts` (the registry, plain data), `workspace` (finding and
writing a candidate's files), `runner` (the only code that starts candidate processes),
`checks` (the hidden checks), `report` (rendering) and `cli` (thin click commands).
"""

__version__ = "0.1.0"
