"""A changed default is read from the signature's text (grader.checks.signatures): every case
passes each argument, so only the signature shows it."""

from __future__ import annotations

import pytest

from grader.checks.signatures import ChangedDefault, changed_defaults

CONTRACT = "def f(x, gamma, *, eps=1e-5, training=True, mode='fan_in'):\n    pass\n"


@pytest.mark.parametrize("signature", [
    "def f(x, gamma, *, eps=1e-5, training=True, mode='fan_in'):",
    "def f(x, gamma, *, eps=0.00001, training=1, mode='fan_in'):",  # the same values spelled
    "def f(x, gamma, *, eps=10 ** -5, training=True, mode='fan_in'):",  # no literal: not read
    "def f(x, gamma, *, eps=EPS, training=True, mode='fan_in'):",
    "def f(x, gamma, eps=1e-5, training=True, mode='fan_in', extra=3):",  # positional is fine
    "def f(*args, **kwargs):",  # nothing to compare
])
def test_the_contracts_defaults_however_written_pass(signature: str) -> None:
    assert changed_defaults(f"{signature}\n    pass\n", CONTRACT, "f") == []


def test_a_default_named_by_a_module_constant_is_read_through_it() -> None:
    """`eps = _EPS` with `_EPS = 1e-6` bound once at the top level changes the default; a
    constant bound twice (or in a function) is not read."""
    changed = changed_defaults("_EPS = 1e-6\n\ndef f(x, gamma, *, eps=_EPS):\n    pass\n",
                               CONTRACT, "f")
    assert changed == [ChangedDefault("eps", "_EPS", "1e-05")]
    for rebound in ("_EPS = 1e-6\n_EPS = 1e-5\n", "_EPS = 1e-6\ndef g():\n    global _EPS\n"
                    "    _EPS = 1e-5\n"):
        assert changed_defaults(rebound + "def f(x, gamma, *, eps=_EPS):\n    pass\n",
                                CONTRACT, "f") == []


def test_a_changed_or_dropped_default_is_named() -> None:
    yours = "import numpy as np\n\ndef f(x, gamma, eps=1e-6, training=True, mode='fan_out'):\n" \
            "    pass\n"
    assert changed_defaults(yours, CONTRACT, "f") == [
        ChangedDefault("eps", "1e-06", "1e-05"), ChangedDefault("mode", "'fan_out'", "'fan_in'")]
    dropped = changed_defaults("def f(x, gamma, eps, training=True, mode='fan_in'):\n  pass\n",
                               CONTRACT, "f")
    assert [d.describe("f") for d in dropped] == [
        "f's eps has no default; the stub's signature gives eps = 1e-05"]


@pytest.mark.parametrize("yours", [
    "def f(x, gamma, eps=1e-6):\n    pass\ndef f(x, gamma, eps=1e-5):\n    pass\n",  # twice
    "f = lambda x, gamma, eps=1e-6: x\n",
    "def f(x, gamma, eps=1e-6:\n",  # does not parse
    "def g(x, gamma, eps=1e-6):\n    pass\n",
])
def test_a_file_whose_function_cannot_be_read_plainly_is_not_judged(yours: str) -> None:
    assert changed_defaults(yours, CONTRACT, "f") == []
