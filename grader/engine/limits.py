"""The defaults of a run's limits, defined once: the workspace's settings, the check context,
the command line and the runner's requests all take them from here; and the limits a command
needs of the machine itself."""

import resource

DEFAULT_TIMEOUT_S = 10.0
"""Seconds each check may run, unless the command line or grader.toml says otherwise."""
DEFAULT_MEMORY_MB = 2048
"""Extra memory the code under test may allocate per part."""
MOST_MEMORY_MB = 1 << 20
"""The most that --memory-mb takes, a TiB: past it a value is no limit but an overflow of the
kernel's (a limit in bytes, added to what the process holds already)."""

OPEN_FILES_NEEDED = 64
"""The fewest open files a grading can run with: every child and sandbox holds pipes and sockets
(the worker's, the command's, a pool's several workers at once)."""
OPEN_FILES_WANTED = 4096
"""What a command raises its soft limit on open files to, where its hard limit allows."""


def raise_open_files() -> None:
    """This process's soft limit on open files raised towards OPEN_FILES_WANTED, as far as its
    hard limit allows (a shell's `ulimit -n` can set it far below what the kernel allows): a
    limit the grading ran into half way would fail checks for want of a descriptor, the fault
    of neither the code nor the grader. The processes it starts inherit the limit. OSError,
    saying so, where even the hard limit is below OPEN_FILES_NEEDED."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    ceiling = OPEN_FILES_WANTED if hard == resource.RLIM_INFINITY \
        else min(hard, OPEN_FILES_WANTED)
    if ceiling < OPEN_FILES_NEEDED:
        raise OSError(f"this command may open only {hard} files (ulimit -n {hard}); grading "
                      f"needs at least {OPEN_FILES_NEEDED}")
    if soft != resource.RLIM_INFINITY and soft < ceiling:
        resource.setrlimit(resource.RLIMIT_NOFILE, (ceiling, hard))
