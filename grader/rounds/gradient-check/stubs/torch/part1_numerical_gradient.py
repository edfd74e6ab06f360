"""Part 1: the numerical gradient of a scalar function by central differences (torch flavor).

    g[i] = (f(x + eps * e_i) - f(x - eps * e_i)) / (2 * eps)      for every index i of x

where e_i is 1 at index i and 0 elsewhere. No autograd here: only calls of f.

Run `grader check part1` to grade this file; `grader hint part1` when stuck.
"""

from __future__ import annotations

from collections.abc import Callable

import torch


def numerical_gradient(f: Callable[[torch.Tensor], torch.Tensor], x: torch.Tensor,
                       eps: float = 1e-6) -> torch.Tensor:
    """Return g, a new tensor of x's shape, dtype and device: the central-difference gradient.

    f: takes a tensor of x's shape and dtype, returns a scalar (a 0-d tensor: float(f(x))
       gives the number).
    x: a floating-point tensor of any shape (0-d included), possibly a non-contiguous view
       (a transpose, a strided slice).
    eps: the step, a positive finite number.

    - You may perturb x in place, but restore it exactly, bit for bit, after each entry: every
      call of f must see x with at most one entry changed, and x must be exactly as it was
      when you return. (x[i] + eps - eps is not always x[i] in floating point.)
    - Call f exactly 2 * x.numel() times (none for an empty x).
    - Raise ValueError when eps is not a positive finite number or x is not a floating-point
      tensor.
    """
    raise NotImplementedError("Part 1: write numerical_gradient")
