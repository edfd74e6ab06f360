"""`python -m grader` runs the same CLI as the `grader` console script."""

from grader.cli import main

main()
