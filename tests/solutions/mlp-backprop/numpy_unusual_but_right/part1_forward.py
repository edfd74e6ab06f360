"""Known-good solution in an unusual style: einsum, and a tuple cache."""

import numpy as np


def mlp_forward(params, X):
    W1, b1, W2, b2 = params["W1"], params["b1"], params["W2"], params["b2"]
    if X.ndim != 2 or W1.ndim != 2 or W2.ndim != 2:
        raise ValueError("X, W1 and W2 must be matrices")
    if W1.shape[0] != X.shape[1] or W2.shape[0] != W1.shape[1]:
        raise ValueError("inner dimensions do not agree")
    if b1.shape != W1.shape[1:] or b2.shape != W2.shape[1:]:
        raise ValueError("a bias does not match its layer")
    h = np.einsum("bd,dh->bh", X, W1) + b1
    np.maximum(h, 0, out=h)
    logits = np.einsum("bh,hc->bc", h, W2) + b2
    return logits, (np.array(X), h)
