"""Part 3: the backward pass of the two-layer MLP, by hand (torch flavor).

Forward (Part 1): z = X @ W1 + b1, h = relu(z), logits = h @ W2 + b2. Given dlogits = dL/dlogits
(as Part 2 returns it, already holding the batch mean's 1/B), return the gradients of L.
relu'(0) = 0: the gate passes gradient where the pre-activation is strictly positive.

How it is graded: the checks call YOUR mlp_forward (Part 1) to get the cache, in your format,
then your mlp_backward on it. So a Part 1 that raises or returns wrong logits fails these
checks too, and the check says so: fix Part 1 first.

Run `grader check part3` to grade this file; `grader hint part3` when stuck.
"""

from __future__ import annotations

from typing import Any

import torch


def mlp_backward(params: dict[str, torch.Tensor], cache: Any,
                 dlogits: torch.Tensor) -> dict[str, torch.Tensor]:
    """Return {"dW1", "db1", "dW2", "db2"}, each of its parameter's shape and dtype.

    cache: what your mlp_forward returned for these params. dlogits: (B, C).
    Raises ValueError when dlogits is not (B, C) for the batch of the cache.
    Must not modify params' tensors, dlogits or the cache (the same cache may be used twice),
    and must not call autograd.
    """
    raise NotImplementedError("Part 3: write mlp_backward")
