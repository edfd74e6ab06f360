"""The defaults of a run's limits, defined once: the workspace's settings, the check context,
the command line and the runner's requests all take them from here."""

DEFAULT_TIMEOUT_S = 10.0
"""Seconds each check may run, unless the command line or grader.toml says otherwise."""
DEFAULT_MEMORY_MB = 2048
"""Extra memory the code under test may allocate per part."""
