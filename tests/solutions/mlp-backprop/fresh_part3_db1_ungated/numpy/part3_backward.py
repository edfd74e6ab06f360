"""Part 3, numpy reference: the backward pass of the two-layer MLP, by hand."""

from __future__ import annotations

from typing import Any

import numpy as np


def mlp_backward(params: dict[str, np.ndarray], cache: dict[str, Any],
                 dlogits: np.ndarray) -> dict[str, np.ndarray]:
    """The gradients of the loss whose gradient w.r.t. the logits is dlogits.

    dlogits already carries the batch mean's 1/B, so nothing here divides by B. The ReLU gate
    is z > 0: relu'(0) = 0, the convention torch.relu's backward uses.
    """
    X, z, h = cache["X"], cache["z"], cache["h"]
    if dlogits.shape != (X.shape[0], params["W2"].shape[1]):
        raise ValueError(f"dlogits must be {(X.shape[0], params['W2'].shape[1])}, got "
                         f"{dlogits.shape}")
    dh = dlogits @ params["W2"].T
    dz = dh * (z > 0)
    return {"dW1": X.T @ dz, "db1": dh.sum(axis=0), "dW2": h.T @ dlogits,
            "db2": dlogits.sum(axis=0)}
