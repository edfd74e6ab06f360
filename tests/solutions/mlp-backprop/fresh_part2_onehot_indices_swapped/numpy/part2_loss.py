import numpy as np

def softmax_cross_entropy(logits, y):
    if logits.ndim != 2:
        raise ValueError("logits must be 2-D")
    n, c = logits.shape
    if y.shape != (n,):
        raise ValueError("y shape")
    if not np.issubdtype(y.dtype, np.integer):
        raise ValueError("y must be integers")
    if n and (y.min() < 0 or y.max() >= c):
        raise ValueError("labels out of range")
    m = logits.max(1, keepdims=True)
    e = np.exp(logits - m)
    s = e.sum(1, keepdims=True)
    logp = logits - m - np.log(s)
    idx = np.arange(n)
    loss = -np.mean(logp[idx, y])
    d = e / s
    d[y, idx] -= 1
    d /= n
    return float(loss), d
