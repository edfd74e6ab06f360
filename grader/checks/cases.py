"""A case: one input of a check, as named arrays the judge made and the probe receives.

A round's input makers (in its checks.py) build Cases; the judge keeps them to compute the truth
and to name the mistake, and sends `case.data()` (plain data) to the child.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np


@dataclass(frozen=True)
class Case:
    """Named inputs, the sizes that name the case ("N=5, D=3"), and its dtype.

    `label` replaces the generated description (e.g. "W has ndim 2" for a malformed input).
    `extra` goes to the probe with the inputs; `judge` is what only the judge may know of the
    case (where a claimed gradient is wrong, say), never sent to the candidate's process.
    """

    inputs: dict[str, Any]
    dims: tuple[tuple[str, int], ...] = ()
    dtype: str = "float64"
    label: str = ""
    extra: dict[str, Any] = field(default_factory=dict)
    judge: dict[str, Any] = field(default_factory=dict)

    def __getitem__(self, name: str) -> Any:
        return self.inputs[name]

    def dim(self, name: str) -> int:
        return dict(self.dims)[name]

    def describe(self) -> str:
        if self.label:
            return self.label
        sizes = ", ".join(f"{name}={size}" for name, size in self.dims)
        return f"{sizes}, {self.dtype}" if sizes else self.dtype

    def data(self) -> dict[str, Any]:
        """What the probe receives: the inputs and the description, nothing of the judge's."""
        return {"inputs": self.inputs, "label": self.describe(), "extra": self.extra}


DRAWN_SIZES = (9, 24)
"""The range (inclusive) of drawn_sizes: past every fixed shape's sizes (8 at most in the rounds'
lists), where tiled, unrolled or hard-coded code first goes wrong, and small enough that a case
costs little."""


def drawn_sizes(rng: np.random.Generator, count: int,
                within: tuple[int, int] = DRAWN_SIZES) -> tuple[int, ...]:
    """`count` sizes drawn from the run's seed, each within `within` (inclusive). A correctness
    check's fixed shapes end with a shape of these: code can then not be right at the fixed
    sizes alone (a tiled product that drops a partial tile, a loop bound written as a number),
    and no two seeds ask for the same sizes."""
    low, high = within
    return tuple(int(v) for v in rng.integers(low, high + 1, size=count))


def span(cases: Sequence[Case]) -> str:
    """'N from 1 to 64, D from 1 to 8, float64 and float32': what a set of cases covered."""
    pieces = []
    names = [name for name, _ in cases[0].dims] if cases else []
    for name in names:
        sizes = [c.dim(name) for c in cases]
        low, high = min(sizes), max(sizes)
        pieces.append(f"{name}={low}" if low == high else f"{name} from {low} to {high}")
    dtypes = list(dict.fromkeys(c.dtype for c in cases))
    pieces.append(" and ".join(dtypes))
    return ", ".join(pieces)


Shapes = dict[str, tuple[int, ...]]


def mismatched_shapes(signature: Mapping[str, Sequence[str]], sizes: Mapping[str, int],
                      ranks: Collection[str] | None = None) -> list[tuple[str, Shapes]]:
    """Inputs that break a shape contract one size at a time: for arguments whose dimensions
    are named (A (M, K), B (K, N), dC (M, N)), each argument with each dimension it shares
    with another one larger than the others say, and each argument of `ranks` (those whose
    number of dimensions the contract fixes; all by default) with one dimension fewer and one
    more. A validation must refuse every one; a list of bad inputs written by hand tends to
    miss one (dC wrong in its columns alone). Each: (what is wrong, the shape of every
    argument)."""
    right = {arg: tuple(sizes[d] for d in dims) for arg, dims in signature.items()}
    shared = {d for d in sizes if sum(dims.count(d) for dims in signature.values()) > 1}
    found: list[tuple[str, Shapes]] = []
    for arg, dims in signature.items():
        for axis, dim in enumerate(dims):
            if dim in shared:
                shape = list(right[arg])
                shape[axis] += 1
                found.append((f"{arg} is {tuple(shape)}: its {dim} is {shape[axis]}, the "
                               f"others' {sizes[dim]}", {**right, arg: tuple(shape)}))
        if ranks is None or arg in ranks:
            found.append((f"{arg} has ndim {len(dims) - 1}", {**right, arg: right[arg][1:]}))
            found.append((f"{arg} has ndim {len(dims) + 1}", {**right, arg: (2, *right[arg])}))
    return found


def mismatched_inputs(good: Mapping[str, Any], signature: Mapping[str, Sequence[str]],
                      ranks: Collection[str] | None = None,
                      listed: Sequence[Mapping[str, Any]] = ()) -> list[tuple[str, dict[str, Any]]]:
    """mismatched_shapes around a valid input (its sizes read from it): for each, what it is
    and the arguments that change (ones of their new shape, in their own dtype), leaving out
    any whose shapes one of the inputs `listed` by hand already has."""
    sizes = {dim: good[arg].shape[axis] for arg, dims in signature.items()
             for axis, dim in enumerate(dims)}

    def shapes(inputs: Mapping[str, Any]) -> tuple[tuple[int, ...], ...]:
        return tuple(tuple(np.shape({**good, **inputs}[arg])) for arg in signature)

    seen = {shapes(inputs) for inputs in listed}
    found = []
    for label, wanted in mismatched_shapes(signature, sizes, ranks):
        changes = {arg: np.ones(shape, dtype=np.asarray(good[arg]).dtype)
                   for arg, shape in wanted.items() if shape != np.shape(good[arg])}
        if shapes(changes) not in seen:
            found.append((label, changes))
    return found
