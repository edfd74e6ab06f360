"""Three helpers that each touch 2 GiB, and a /tmp filled until it refuses."""

import os

import numpy as np

EXPLANATION = ""


def _hog():
    try:
        with open("/tmp/filler", "wb") as filler:
            for _ in range(256):
                filler.write(b"\0" * (1 << 20))
    except OSError:
        pass
    helpers = []
    for _ in range(3):
        pid = os.fork()
        if pid == 0:
            try:
                block = np.ones(1 << 28)
                block += 1
            finally:
                os._exit(0)
        helpers.append(pid)
    for pid in helpers:
        os.waitpid(pid, 0)


_hog()


def prefix_products_out(W, P):
    raise NotImplementedError("out of memory, on purpose")
