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
    dh = np.einsum("bc,hc->bh", dlogits, params["W2"])
    dz = np.where(z > 0, dh, 0.0).astype(dh.dtype)
    grads = {}
    grads["dW2"] = np.einsum("bh,bc->hc", h, dlogits)
    grads["db2"] = np.add.reduce(dlogits, axis=0)
    grads["dW1"] = np.einsum("bd,bh->dh", X, dz)
    grads["db1"] = np.add.reduce(dh, axis=0)
    return {k: grads[k] for k in ("dW1", "db1", "dW2", "db2")}
