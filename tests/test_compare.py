"""Comparing a result with the truth, and two computations with each other."""

from __future__ import annotations

import numpy as np
import pytest

from grader.checks.compare import tree_difference, tree_matches

NAN, INF = float("nan"), float("inf")


@pytest.mark.parametrize("actual", [[1.0, NAN], [1.0, INF], [NAN, NAN]])
def test_against_the_truth_nothing_that_is_not_finite_is_close(actual: list[float]) -> None:
    assert not tree_matches(np.array(actual), np.array([1.0, 2.0]), "float64")
    assert not tree_matches(np.array(actual), np.array([1.0, NAN]), "float64")


@pytest.mark.parametrize(("actual", "expected", "alike"), [
    ([1.0, NAN], [1.0, NAN], True),
    ([INF, -INF, 2.0], [INF, -INF, 2.0], True),
    ([1.0, INF], [1.0, -INF], False),
    ([1.0, NAN], [1.0, INF], False),
    ([1.0, 5.0], [1.0, NAN], False),
    ([1.0, NAN], [1.0, 5.0], False),
    ([1.5, NAN], [1.0, NAN], False),
])
def test_two_computations_alike_where_they_make_the_same_nan_or_infinity(
        actual: list[float], expected: list[float], alike: bool) -> None:
    """A run and its repeat, or a result and what a slip computes: code that makes a NaN makes
    it every time, and that is no difference."""
    assert tree_matches(np.array(actual), np.array(expected), "float64", alike=True) is alike


def test_an_infinity_in_one_entry_does_not_loosen_the_others() -> None:
    """The tolerance scales with the largest finite magnitude, not with an infinity."""
    found = tree_difference(np.array([INF, 1.5]), np.array([INF, 1.0]), "float64", "y",
                            alike=True)
    assert found == "first wrong entry y[1]: yours 1.5, expected 1; max abs error 0.5, " \
        "max rel error 0.5"
