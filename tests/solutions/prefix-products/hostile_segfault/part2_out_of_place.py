"""Hostile: crashes the interpreter the way a bad C extension would."""

import os
import signal


def prefix_products(W):
    os.kill(os.getpid(), signal.SIGSEGV)
