"""Known wrong answers, so a failing check can name the mistake instead of only showing numbers.

Each Mistake recomputes what a specific slip would produce (in float64, from the same inputs);
when the candidate's outputs match one of them, its hint is the diagnosis (see `diagnose`). Order
matters on ties, so the most specific slips come first.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from grader.checks import truth
from grader.checks.cases import Case
from grader.checks.compare import matches


@dataclass(frozen=True)
class Mistake:
    name: str
    reproduces: Callable[[Case, np.ndarray], bool]
    hint: str


def same_as(output: Callable[[Case], np.ndarray]) -> Callable[[Case, np.ndarray], bool]:
    """A matcher: the candidate's array equals what this slip computes on the same case."""

    def reproduces(case: Case, actual: np.ndarray) -> bool:
        with np.errstate(all="ignore"):
            return matches(actual, output(case), case.dtype)

    return reproduces


def _T(a: np.ndarray) -> np.ndarray:
    return np.swapaxes(a, -1, -2)


def _chain(W: np.ndarray, step: Callable[[np.ndarray, np.ndarray], np.ndarray]) -> np.ndarray:
    out = np.empty_like(W)
    out[0] = W[0]
    for i in range(1, len(W)):
        out[i] = step(out[i - 1], W[i])
    return out


def _exclusive(W: np.ndarray) -> np.ndarray:
    out = np.empty_like(W)
    out[0] = np.eye(W.shape[1])
    for i in range(1, len(W)):
        out[i] = out[i - 1] @ W[i - 1]
    return out


def _pairwise(W: np.ndarray) -> np.ndarray:
    out = W.copy()
    out[1:] = W[:-1] @ W[1:]
    return out


def _f64(case: Case) -> np.ndarray:
    return case.W.astype(np.float64)


def _first_slot_only(case: Case, actual: np.ndarray) -> bool:
    """Everything right but P[0]: the first slot was never written."""
    expected = truth.forward(case.W)
    return (
        case.n > 1
        and matches(actual[1:], expected[1:], case.dtype)
        and not matches(actual[:1], expected[:1], case.dtype)
    )


FORWARD_MISTAKES: tuple[Mistake, ...] = (
    Mistake(
        "first slot not written",
        _first_slot_only,
        "P[0] = W[0]: the first slot must be written too (it stayed as it was).",
    ),
    Mistake(
        "reversed order",
        same_as(lambda c: _chain(_f64(c), lambda p, w: w @ p)),
        "matmul is not commutative: the new factor goes on the right, P[i] = P[i-1] @ W[i] "
        "(you computed W[i] @ P[i-1]).",
    ),
    Mistake(
        "elementwise product",
        same_as(lambda c: _chain(_f64(c), lambda p, w: p * w)),
        "`*` multiplies elementwise; the prefix product needs the matrix product `@`.",
    ),
    Mistake(
        "transposed factor",
        same_as(lambda c: _chain(_f64(c), lambda p, w: p @ w.T)),
        "a stray transpose: P[i] = P[i-1] @ W[i], with W[i] as it is.",
    ),
    Mistake(
        "exclusive scan",
        same_as(lambda c: _exclusive(_f64(c))),
        "the prefix products are inclusive: P[0] = W[0] and P[i] ends with W[i] (you "
        "computed the exclusive scan, shifted by one).",
    ),
    Mistake(
        "no running product",
        same_as(lambda c: _pairwise(_f64(c))),
        "P[i] multiplies the running product P[i-1], not the previous input W[i-1].",
    ),
)


def _never_written(case: Case, actual: np.ndarray) -> bool:
    """The caller's buffer still holds nothing but its NaN prefill."""
    return actual.size > 0 and bool(np.isnan(actual).all())


# Part 1 reads the answer from the caller's NaN-prefilled P, so "nothing landed in P" is its own
# slip there (a new array returned instead, or the name P rebound), listed first.
INPLACE_MISTAKES: tuple[Mistake, ...] = (
    Mistake(
        "P never written",
        _never_written,
        "P was never written: the caller reads the answer from the buffer it passed in. Fill "
        "it with slice assignment (P[i] = ...); returning a new array, or rebinding the name "
        "(P = ...), leaves the caller's P untouched.",
    ),
) + FORWARD_MISTAKES


def _stale_reads(W: np.ndarray) -> np.ndarray:
    """A scan that updates in place in ascending order, so a level reads its own new values."""
    current = W.copy()
    step = 1
    while step < len(W):
        for i in range(step, len(W)):
            current[i] = current[i - step] @ current[i]
        step *= 2
    return current


def _scan(W: np.ndarray, keep_going: Callable[[int, int], bool], swap: bool = False) -> np.ndarray:
    current = W.copy()
    step = 1
    while keep_going(step, len(W)):
        new = current.copy()
        new[step:] = current[step:] @ current[:-step] if swap else current[:-step] @ current[step:]
        current = new
        step *= 2
    return current


SCAN_FORWARD_MISTAKES: tuple[Mistake, ...] = (
    Mistake(
        "same-level reads",
        same_as(lambda c: _stale_reads(_f64(c))),
        "read from the previous level's snapshot: updating in place in ascending order lets a "
        "level read values it has already updated (copy `old` first, or go high to low).",
    ),
    Mistake(
        "swapped combine",
        same_as(lambda c: _scan(_f64(c), lambda s, n: s < n, swap=True)),
        "matmul is not commutative: new[i] = old[i - step] @ old[i], the lower index on the left.",
    ),
    Mistake(
        "too few levels",
        same_as(lambda c: _scan(_f64(c), lambda s, n: 2 * s < n)),
        "run levels while step < N (ceil(log2 N) of them); stopping earlier leaves the tail short.",
    ),
    Mistake(
        "too few levels (step <= N/2)",
        same_as(lambda c: _scan(_f64(c), lambda s, n: 2 * s <= n and s < n)),
        "run levels while step < N (ceil(log2 N) of them); stopping earlier leaves the tail short.",
    ),
) + FORWARD_MISTAKES


_ADJOINT_STEPS: dict[str, Callable[[np.ndarray, np.ndarray], np.ndarray]] = {
    "adj @ W.T": lambda adj, w: adj @ w.T,
    "adj @ W": lambda adj, w: adj @ w,
    "W.T @ adj": lambda adj, w: w.T @ adj,
}


def _backward(
    case: Case,
    *,
    accumulate: bool = True,
    add_before_use: bool = True,
    transpose_left: bool = True,
    left_is_current: bool = False,
    adjoint_step: str = "adj @ W.T",
) -> np.ndarray:
    """The sequential backward with one knob turned to a known slip."""
    W, dP = _f64(case), case.dP.astype(np.float64)
    n, d, _ = W.shape
    P = truth.forward(W)
    dW = np.empty_like(W)
    adj = np.zeros((d, d))
    for i in range(n - 1, -1, -1):
        if add_before_use:
            adj = adj + dP[i] if accumulate else dP[i]
        if left_is_current:
            left = P[i]
        else:
            left = P[i - 1] if i > 0 else np.eye(d)
        dW[i] = (left.T if transpose_left else left) @ adj
        if not add_before_use:
            adj = adj + dP[i]
        adj = _ADJOINT_STEPS[adjoint_step](adj, W[i])
    return dW


BACKWARD_MISTAKES: tuple[Mistake, ...] = (
    Mistake(
        "no accumulation",
        same_as(lambda c: _backward(c, accumulate=False)),
        "accumulate the adjoint over every later prefix: W[j] feeds P[j], P[j+1], ..., P[N-1], "
        "so dW[j] collects gradient from all of them (adj = adj + dP[i], then pass it down).",
    ),
    Mistake(
        "direct term added late",
        same_as(lambda c: _backward(c, add_before_use=False)),
        "add dP[i] to the adjoint before computing dW[i]: P[i] depends on W[i] directly.",
    ),
    Mistake(
        "left factor not transposed",
        same_as(lambda c: _backward(c, transpose_left=False)),
        "for Y = A @ B, dL/dB = A^T @ G: transpose the prefix, dW[i] = P[i-1]^T @ adj.",
    ),
    Mistake(
        "left factor off by one",
        same_as(lambda c: _backward(c, left_is_current=True)),
        "dW[i] uses the prefix before i: P[i-1] (the identity for i = 0), not P[i].",
    ),
    Mistake(
        "adjoint not transposed",
        same_as(lambda c: _backward(c, adjoint_step="adj @ W")),
        "for Y = A @ B, dL/dA = G @ B^T: pass the adjoint down as adj @ W[i]^T.",
    ),
    Mistake(
        "adjoint on the wrong side",
        same_as(lambda c: _backward(c, adjoint_step="W.T @ adj")),
        "matmul is not commutative: dL/dA = G @ B^T, so the adjoint is adj @ W[i]^T, "
        "not W[i]^T @ adj.",
    ),
)


def _scan_backward(case: Case, *, passthrough: bool = True, transposes: bool = True) -> np.ndarray:
    """The level-by-level scan backward with one knob turned to a known slip."""
    levels = truth.scan_levels(case.W)
    grad = case.dP.astype(np.float64).copy()
    t = _T if transposes else (lambda a: a)
    for step, old in reversed(levels):
        new = np.zeros_like(grad)
        if passthrough:
            new[:step] += grad[:step]
        new[:-step] += grad[step:] @ t(old[step:])
        new[step:] += t(old[:-step]) @ grad[step:]
        grad = new
    return grad


SCAN_BACKWARD_MISTAKES: tuple[Mistake, ...] = (
    Mistake(
        "no pass-through",
        same_as(lambda c: _scan_backward(c, passthrough=False)),
        "indices below step are copied through a level unchanged, so their gradient passes "
        "through unchanged too: grad_old[:step] += grad[:step].",
    ),
    Mistake(
        "missing transposes",
        same_as(lambda c: _scan_backward(c, transposes=False)),
        "for new[i] = A @ B: A gets G @ B^T and B gets A^T @ G; the transposes matter.",
    ),
)


def diagnose(wrong: list[tuple[Case, np.ndarray]], mistakes: tuple[Mistake, ...]) -> str | None:
    """The hint of the known mistake that reproduces most of the wrong outputs, if it explains
    more than half of them (ties go to the earlier, more specific one).

    One case alone can mislead: at N = 1 a P that was never written and a P whose first slot
    was skipped look the same, so the verdict is taken over every case that came out wrong.
    """
    best, best_count = None, 0
    for mistake in mistakes:
        count = sum(mistake.reproduces(case, actual) for case, actual in wrong)
        if count > best_count:
            best, best_count = mistake, count
    if best is None or 2 * best_count <= len(wrong):
        return None
    return best.hint
