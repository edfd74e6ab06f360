"""Known-good solution in an unusual style: the ReLU mask from the output h (h > 0 is the same
gate as z > 0), einsum for every product."""

import numpy as np


def mlp_backward(params, cache, dlogits):
    X, h = cache
    if dlogits.shape != (X.shape[0], params["W2"].shape[1]):
        raise ValueError("dlogits must be (B, C)")
    dz = np.einsum("bc,hc->bh", dlogits, params["W2"]) * (h > 0)
    return {"dW1": np.einsum("bd,bh->dh", X, dz), "db1": np.einsum("bh->h", dz),
            "dW2": np.einsum("bh,bc->hc", h, dlogits), "db2": np.einsum("bc->c", dlogits)}
