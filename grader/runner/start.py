"""The warm worker's entry point: `python -P -m grader.runner.start [--sandbox [REQUEST]]`.

Without options the worker forks its children itself (grader.runner.worker); with `--sandbox`
each request's candidate code runs in a sandbox of its own (grader.runner.sandbox); with
`--sandbox REQUEST` (JSON) the sandbox of that request, the first to come, is started before
anything heavy is imported. That sandbox's executor then imports torch beside the worker from
the first moment: on a cold sandboxed `grader check` it is the last process to be ready.

-P: the current folder is not put on sys.path, so a folder called grader/ where the command
was started cannot shadow this package.
"""

from __future__ import annotations

import json
import os
import sys


def main(argv: list[str]) -> None:
    children = None
    if argv[:1] == ["--sandbox"]:
        from grader.runner.protocol import Request
        from grader.runner.sandbox import prestarted, sandboxed_children

        first = argv[1:]
        children = prestarted(Request.from_dict(json.loads(first[0]))) if first \
            else sandboxed_children
    from grader.runner.worker import forked_children, serve

    serve(sys.stdin, sys.stdout, children or forked_children)
    # Every answer is written and every child reaped: nothing is left to save. An interpreter
    # that has imported torch takes half a second to tear down, and the CLI waits for it.
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


if __name__ == "__main__":
    main(sys.argv[1:])
