import numpy as np


def relative_error(a, b):
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    if a.shape != b.shape:
        raise ValueError("shape mismatch")
    if a.size == 0:
        return 0.0
    tiny = np.finfo(np.float64).tiny
    err = np.abs(a - b) / np.maximum(np.abs(a), np.abs(b)) + tiny
    return float(err.max())
