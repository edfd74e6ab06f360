"""What holds of a wrong result, when no slip of the reference explains it.

Compare the candidate's output with the truth under simple transformations (negated, scaled,
transposed, shifted or reversed along the first axis), find which pieces and entries are right,
and over many cases which ones came out wrong (a dtype, a size from some point on): the facts
a candidate can act on, in place of a generic recipe.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from grader.checks.cases import Case
from grader.checks.compare import close_mask, tree_matches

Transform = Callable[[np.ndarray], np.ndarray | None]
NAMED_CASES = 3
"""Up to this many wrong cases are named one by one, when nothing else sets them apart: their
inputs are what a candidate can try by hand."""


def _flip0(e: np.ndarray) -> np.ndarray | None:
    return e[::-1] if e.ndim >= 1 and e.shape[0] > 1 else None


def _swap_last(e: np.ndarray) -> np.ndarray | None:
    return np.swapaxes(e, -1, -2) if e.ndim >= 2 and e.shape[-1] == e.shape[-2] > 1 else None


TRANSFORMS: tuple[tuple[str, Transform], ...] = (
    ("the expected values with the sign flipped", lambda e: -e),
    ("the expected values with the last two axes swapped (transposed)", _swap_last),
    ("the expected values in reverse order along the first axis", _flip0),
)


def _leaves(tree: Any, name: str) -> list[tuple[str, Any]]:
    if isinstance(tree, dict):
        return [leaf for key in tree for leaf in _leaves(tree[key], str(key))]
    if isinstance(tree, list | tuple):
        return [leaf for i, item in enumerate(tree) for leaf in _leaves(item, f"{name}[{i}]")]
    return [(name, tree)]


Sizes = Sequence[tuple[str, int]]
"""A case's sizes by name (Case.dims)."""


def describe(actual: Any, expected: Any, dtype: str, name: str, dims: Sizes = (),
             others: Sequence[tuple[Any, Any, Sizes]] = ()) -> str | None:
    """One sentence of what holds of a wrong result on one case (whose sizes are `dims`), or
    None when nothing simple does (or the shapes differ: that is said already). `others`, the
    other wrong cases (result, truth, sizes), tell apart sizes that are equal in this one (a
    factor of 3 where N, M and K are all 3)."""
    pairs = list(zip(_leaves(actual, name), _leaves(expected, name), strict=False))
    if len(pairs) != len(_leaves(expected, name)):
        return None
    wrong, reshaped = [], []
    for (label, a), (_, e) in pairs:
        try:
            a, e = np.asarray(a, dtype=np.float64), np.asarray(e, dtype=np.float64)
        except (TypeError, ValueError):
            return None
        if a.shape != e.shape:
            moved = size_one_axes_moved(label, a, e, dtype)
            if moved is None:
                return None
            reshaped.append(moved)
        elif not tree_matches(a, e, dtype):
            wrong.append((label, a, e))
    if reshaped:
        return "; ".join(reshaped) + "."
    if not wrong:
        return None
    elsewhere = [(dict(_leaves(a, name)), dict(_leaves(e, name)), d) for a, e, d in others]
    said = [(label, _one(label, a, e, dtype, dims,
                         [(o[label], t[label], d) for o, t, d in elsewhere
                          if label in o and label in t]))
            for label, a, e in wrong]
    facts = _grouped([(label, s) for label, s in said if s])
    if len(pairs) > 1:
        right = [label for (label, _), _ in pairs if label not in {w[0] for w in wrong}]
        if right:  # the wrong ones are named here where no fact below names each
            told = all(fact for _, fact in said)
            facts.insert(0, f"{listed(right)} {'is' if len(right) == 1 else 'are'} right" + (
                "" if told else f", {listed([w[0] for w in wrong])} "
                                f"{'is' if len(wrong) == 1 else 'are'} not"))
    return "; ".join(facts) + "." if facts else None


_PLURAL = {"is": "are", "has": "have", "equals": "equal", "agrees": "agree", "holds": "hold"}


def _grouped(said: Sequence[tuple[str, str]]) -> list[str]:
    """The facts, one per piece, with those that say the same of several pieces said once
    of them all ("your dW1 and db1 are the expected values times 2"): six gradients halved
    read as one slip, not six."""
    groups: dict[str, list[str]] = {}
    for label, text in said:
        head = f"your {label} "
        rest = text[len(head):] if text.startswith(head) else ""
        verb = rest.split(" ", 1)[0]
        key = rest if verb in _PLURAL and label not in rest else f"\0{text}"
        groups.setdefault(key, []).append(label)
    facts = []
    for key, labels in groups.items():
        if key.startswith("\0") or len(labels) == 1:
            facts.extend([key[1:]] if key.startswith("\0") else [f"your {labels[0]} {key}"])
            continue
        verb, rest = key.split(" ", 1)
        facts.append(f"your {listed(labels)} {_PLURAL[verb]} {rest}")
    return facts


def size_one_axes_moved(label: str, a: np.ndarray, e: np.ndarray, dtype: str) -> str | None:
    """Where a result of another shape holds the expected values, in order, and the two shapes
    differ only in axes of size 1, what holds, and what makes such a shape in the direction
    it differs (axes lost: a keepdims dropped, a squeeze(); too many: a keepdims kept; as many:
    one moved); None otherwise."""
    if a.size != e.size or [n for n in a.shape if n != 1] != [n for n in e.shape if n != 1] \
            or not tree_matches(a.reshape(e.shape), e, dtype):
        return None
    how = ("axes of size 1 lost: a keepdims dropped, or a squeeze() that removes every axis "
           "of size 1, a batch of one's too" if a.ndim < e.ndim else
           "axes of size 1 too many: a keepdims kept, or an axis of size 1 added"
           if a.ndim > e.ndim else "an axis of size 1 at the other end")
    return (f"your {label} holds the expected values in shape {tuple(a.shape)} where "
            f"{tuple(e.shape)} is expected: only axes of size 1 differ ({how})")


def listed(labels: Sequence[str]) -> str:
    """"a", "a and b", "a, b and c"."""
    return ", ".join(labels[:-1]) + " and " + labels[-1] if len(labels) > 1 else labels[0]


def _one(label: str, a: np.ndarray, e: np.ndarray, dtype: str, dims: Sizes,
         others: Sequence[tuple[Any, Any, Sizes]] = ()) -> str | None:
    """What holds of one wrong array (`others`: the same array in other wrong cases)."""
    finite = np.isfinite(e)
    bad = finite & ~np.isfinite(a)
    if bad.any():
        return f"your {label} has {int(bad.sum())} NaN or infinite entr" \
               f"{'y' if bad.sum() == 1 else 'ies'} where every expected value is finite"
    unwritten = _never_written(label, a, e, dtype)
    if unwritten:
        return unwritten
    for words, transform in TRANSFORMS:
        other = transform(e)
        if other is not None and tree_matches(a, other, dtype) and not tree_matches(a, e, dtype):
            return f"your {label} equals {words}"
    factors = [(f, d) for o, t, d in others if (f := _ratio(o, t)) is not None]
    scale = _scale(a, e)
    if scale is not None and tree_matches(a, scale * e, dtype):
        return f"your {label} is the expected values times {_factor(scale)}" \
            + _sized(scale, dims, factors)
    return _scaled_number(label, a, e, dims, factors) or _precision(label, a, e, dtype, others) \
        or _shifted(label, a, e, dtype) or _partly(label, a, e, dtype)


SCALED_NUMBER_CASES = 3
"""How many wrong cases must agree before a single number (a loss, a norm) off by a factor is
named: in one case any number is some multiple of the expected one; the same factor in each of
three, or the same size (or ratio of sizes) of each, is a slip of scale."""


def _scaled_number(label: str, a: np.ndarray, e: np.ndarray, dims: Sizes,
                   factors: Sequence[tuple[float, Sizes]]) -> str | None:
    """Where a single number is off by a factor that the other wrong cases share (the same
    constant, or the same size or ratio of sizes of each case: a mean over the wrong count, a
    sum where a mean belongs), what holds; None otherwise."""
    c = _ratio(a, e)
    if a.size != 1 or c is None or len(factors) + 1 < SCALED_NUMBER_CASES:
        return None
    sized = _sized(c, dims, factors, every=True)
    if sized:
        return f"your {label} is the expected value times {c:.4g}{sized}"
    if all(abs(f - c) <= 1e-6 * abs(c) for f, _ in factors):
        return f"your {label} is the expected value times {_factor(c)}, in every wrong case"
    return None


UNWRITTEN_ORDERS = 30
"""How many orders of magnitude an entry must lie from the expected values' largest to read as
memory never written: a slip of arithmetic (a factor, a sign, an eps in the wrong place, a
float32 step) moves a value by a few orders at most, where the bytes an empty array holds
read as 1e-310 or 1e+113."""


def _never_written(label: str, a: np.ndarray, e: np.ndarray, dtype: str) -> str | None:
    """Wrong entries so far from every expected value that no arithmetic on the inputs made
    them: bytes an `empty`/`empty_like` array held before any slot of it was assigned."""
    finite = np.isfinite(a) & np.isfinite(e)
    scale = float(np.abs(e[finite]).max()) if finite.any() else 0.0
    with np.errstate(divide="ignore"):
        orders = np.abs(np.log10(np.abs(np.where(finite, a, 0.0))) - np.log10(scale or 1.0))
    far = finite & (a != 0) & (orders > UNWRITTEN_ORDERS) & ~close_mask(a, e, dtype)
    if not far.any():
        return None
    where = tuple(int(i) for i in np.argwhere(far)[0])
    slot = f"{label}[{', '.join(map(str, where))}]" if where else label
    others = int(far.sum()) - 1
    also = f" (and {others} more entr{'y' if others == 1 else 'ies'} as far off)" if others else ""
    return (f"your {slot} is {a[where]:.3g} where {e[where]:.3g} was expected{also}: no "
            f"arithmetic on these inputs makes such values, but memory never written does (an "
            f"array from empty or empty_like holds whatever bytes were there), so some slots "
            f"of your {label} are never assigned")


def _precision(label: str, a: np.ndarray, e: np.ndarray, dtype: str,
               others: Sequence[tuple[Any, Any, Sizes]] = ()) -> str | None:
    """A float64 result right only to single precision (float32's rounding, accumulated over a
    few operations, errs by 1e-9 to 2e-6 of the scale): computed in float32 somewhere. Of
    several entries, in this case or, where it has fewer than 4, in another wrong one
    (`others`): a number or two alone can be that close for other reasons."""
    error = _single_precision_error(a, e, dtype)
    if error is None or a.size < 4 and not any(
            np.size(o) >= 4 and _single_precision_error(np.asarray(o, dtype=np.float64),
                                                        np.asarray(t, dtype=np.float64), dtype)
            for o, t, _ in others):
        return None
    return (f"your {label} agrees with the expected values only to about "
            f"{int(-np.log10(error))} significant digits, single precision's: part of it "
            "was computed in float32 (keep the inputs' dtype throughout)")


def _single_precision_error(a: np.ndarray, e: np.ndarray, dtype: str) -> float | None:
    """The largest error relative to the result's scale, where it lies in single precision's
    range (1e-9 to 2e-6) for a finite float64 result of this shape; None otherwise."""
    if dtype != "float64" or a.shape != e.shape or not e.size or not np.isfinite(a).all():
        return None
    scale = max(float(np.max(np.abs(e))), np.finfo(np.float64).tiny)
    error = float(np.max(np.abs(a - e))) / scale
    return error if 1e-9 < error < 2e-6 else None


def _scale(a: np.ndarray, e: np.ndarray) -> float | None:
    """The least-squares c with a = c e, when there is one worth naming: not 0, not within
    0.1% of 1 (that is precision, not a factor), and over two or more non-zero entries (any
    single number is some multiple of another)."""
    norm = float(np.sum(e * e))
    if norm == 0.0 or np.count_nonzero(e) < 2:
        return None
    c = float(np.sum(a * e)) / norm
    return None if c == 0.0 or abs(c - 1.0) < 1e-3 else c


def _factor(c: float) -> str:
    for whole in (2, 3, 4):
        if abs(c - whole) < 1e-6 * whole:
            return f"{whole} (a factor {whole} too many)"
        if abs(c - 1.0 / whole) < 1e-6:
            return f"1/{whole} (a factor {whole} missing)"
    return f"{c:.4g}"


def _ratio(actual: Any, expected: Any) -> float | None:
    """The factor between a result and the truth of the same shape (see _scale; a single
    number's is the quotient of the two), or None."""
    try:
        a, e = np.asarray(actual, dtype=np.float64), np.asarray(expected, dtype=np.float64)
    except (TypeError, ValueError):
        return None
    if a.shape != e.shape:
        return None
    if e.size == 1:
        c = float(a.flat[0]) / float(e.flat[0]) if float(e.flat[0]) else 0.0
        return None if c == 0.0 or not np.isfinite(c) or abs(c - 1.0) < 1e-3 else c
    return _scale(a, e)


def _size_factors(dims: Sizes) -> list[tuple[str, float]]:
    """The factors a slip of sizes makes, in words, each with its value in this case: one over
    a size (a sum divided by its count), a size (a mean where a sum belongs), then a ratio of
    two (divided by one size where another belongs; the one that belongs may be 1 in this case,
    a batch of one)."""
    sizes = [(name, value) for name, value in dims if value > 1]
    every = [(name, value) for name, value in dims if value >= 1]
    return [*((f"divided by {n}", 1.0 / v) for n, v in sizes),
            *((f"multiplied by {n}", float(v)) for n, v in sizes),
            *((f"divided by {m} where {n} belongs", v / w)
              for n, v in every for m, w in every if m != n and v != w)]


def _sized(c: float, dims: Sizes, others: Sequence[tuple[float, Sizes]] = (),
           every: bool = False) -> str:
    """Which of the case's sizes the factor is (or is one over): a sum divided by its count,
    or a mean where a sum belongs, is off by a size, not by a constant. `others`: the factor and
    sizes of other wrong cases. Where several sizes fit this case, those that fit the others
    too are kept; `every`: only those that fit every other case are named at all. A ratio of
    two sizes (divided by the wrong count) is named only where another wrong case, whose ratio
    differs, has the same: small sizes make many fractions, and one case fits some by chance."""
    fits = [(w, v) for w, v in _size_factors(dims) if abs(c - v) < 1e-6 * abs(v)]
    singles = [w for w, _ in fits if " where " not in w]
    if singles:
        for factor, sizes in others:
            if len(singles) < 2 and not every:
                break
            there = dict(_size_factors(sizes))
            kept = [w for w in singles if w in there
                    and abs(factor - there[w]) < 1e-6 * abs(there[w])]
            singles = kept if kept or every else singles
        if singles:
            verb = singles[0].split(" by ", 1)[0]
            names = [w.split(" by ", 1)[1] for w in singles if w.startswith(verb)]
            return f", as if {verb} by {' or '.join(names)} ({_in_case(singles[0], dims)})"
    for words, value in fits:
        if " where " not in words:
            continue
        ratios = [dict(_size_factors(sizes)).get(words) for _, sizes in others]
        shared = [r for (f, _), r in zip(others, ratios, strict=True)
                  if r is not None and abs(f - r) < 1e-6 * abs(r)]
        if shared and len(shared) == len(others) and any(
                abs(r - value) > 1e-6 * abs(value) for r in shared):
            return f", as if {words} ({_in_case(words, dims)})"
    return ""


def _in_case(words: str, dims: Sizes) -> str:
    """The sizes `words` names, with their values in this case."""
    named = dict(dims)
    used = [n for n in named if f" {n} " in f" {words} "]
    if len(used) == 1:
        return f"{named[used[0]]} in this case"
    return ", ".join(f"{n} = {named[n]}" for n in used) + " in this case"


def _shifted(label: str, a: np.ndarray, e: np.ndarray, dtype: str) -> str | None:
    """Slot i holding the expected slot i - 1 (or i + 1)."""
    if a.ndim < 1 or a.shape[0] < 3:
        return None
    if tree_matches(a[1:], e[:-1], dtype):
        return f"your {label}[i] holds the expected {label}[i - 1]: one slot late"
    if tree_matches(a[:-1], e[1:], dtype):
        return f"your {label}[i] holds the expected {label}[i + 1]: one slot early"
    return None


def _partly(label: str, a: np.ndarray, e: np.ndarray, dtype: str) -> str | None:
    """Which slots along the first axis are right, when some are."""
    if a.ndim < 1 or a.shape[0] < 2:
        return None
    right = [i for i in range(a.shape[0]) if tree_matches(a[i], e[i], dtype)]
    if not right:
        return None
    wrong = [i for i in range(a.shape[0]) if i not in right]
    return f"your {label} is right at {_indices(label, right)} and wrong at " \
           f"{_indices(label, wrong)}"


def _indices(label: str, found: Sequence[int]) -> str:
    if len(found) > 2 and list(found) == list(range(found[0], found[-1] + 1)):
        return f"{label}[{found[0]}] to {label}[{found[-1]}]"
    shown = ", ".join(f"{label}[{i}]" for i in found[:4])
    return shown + (" ..." if len(found) > 4 else "")


def where_wrong(cases: Sequence[Case], right: Sequence[bool]) -> str | None:
    """Over many cases, what the wrong ones share that the right ones do not: a dtype, or a
    size past some bound ("wrong only where N >= 2"); else the few wrong ones, or the few right
    ones, by name. None when every case is wrong."""
    wrong = [c for c, ok in zip(cases, right, strict=True) if not ok]
    fine = [c for c, ok in zip(cases, right, strict=True) if ok]
    if not wrong or not fine:
        return None
    dtypes = {c.dtype for c in wrong}
    if len(dtypes) == 1 and not dtypes & {c.dtype for c in fine}:
        return f"wrong only in {dtypes.pop()}: right in {listed(sorted({c.dtype for c in fine}))}"
    for name, _ in wrong[0].dims:
        if not all(name in dict(c.dims) for c in cases):
            continue
        low = min(c.dim(name) for c in wrong)
        if all(c.dim(name) < low for c in fine):
            return f"wrong only where {name} >= {low} (right in every case with {name} < {low})"
        high = max(c.dim(name) for c in wrong)
        if all(c.dim(name) > high for c in fine):
            return f"wrong only where {name} <= {high} (right in every case with {name} > {high})"
    if len(wrong) <= NAMED_CASES:
        return f"wrong only in {'; '.join(c.describe() for c in wrong)} (right in the other " \
               f"{len(fine)} cases)"
    if len(fine) <= NAMED_CASES:  # the few right ones are as telling (a run of no step)
        return f"right only in {'; '.join(c.describe() for c in fine)} (wrong in the other " \
               f"{len(wrong)} cases)"
    return f"wrong in {len(wrong)} of {len(cases)} cases, right in the rest"
