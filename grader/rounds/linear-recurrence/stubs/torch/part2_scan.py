"""Part 2: the recurrence as a work-efficient parallel scan (torch flavor).

Step t is the affine map x -> a[t] * x + b[t], written as the pair (a[t], b[t]). Composing two
such maps gives another one, so h[t] is the composition of steps 0 .. t applied to h0: a prefix
scan under an associative (not commutative) operator whose identity is the pair (1, 0).

Blelloch's scan: an up-sweep that combines pairs into a tree (T/2, T/4, ... combines per
level), then a down-sweep that hands every slot the composition of all the steps before it.
That is O(T) work in O(log T) levels, where Hillis-Steele's scan does O(T log T) work.

Run `grader check part2` to grade this file; `grader hint part2` when stuck.
"""

from __future__ import annotations

import torch


def combine(left: tuple[torch.Tensor, torch.Tensor],
            right: tuple[torch.Tensor, torch.Tensor]) -> tuple[torch.Tensor, torch.Tensor]:
    """Compose two affine maps, given as pairs (a, b) of same-shaped tensors: `left` is
    applied first, then `right`. Returns the pair of the map x -> a2 * (a1 * x + b1) + b2.

    (1, 0) is the identity: combine((1, 0), m) == combine(m, (1, 0)) == m. The operator is
    associative but not commutative: combine(left, right) != combine(right, left) in general.
    """
    raise NotImplementedError("Part 2: write combine")


def scan_recurrence(a: torch.Tensor, b: torch.Tensor, h0: torch.Tensor) -> torch.Tensor:
    """Return Part 1's h (T, D) by a Blelloch scan built on combine: O(log T) levels, each one
    batched operation over the level's pairs (no Python loop over t inside a level), O(T) work
    in total. Any T: T == 0, T == 1 and lengths that are not powers of two too (pad with the
    identity (1, 0) if you pad). Same ValueError rules as Part 1; do not modify the inputs.
    You may import Part 1 (`from exercises.part1_sequential import ...`).
    """
    raise NotImplementedError("Part 2: write scan_recurrence")
