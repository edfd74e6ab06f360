import numpy as np


def relative_error(a, b):
    if a.shape != b.shape:
        raise ValueError("shapes differ")
    if a.size == 0:
        return 0.0
    tiny = np.finfo(a.dtype).tiny
    return float(np.mean(np.abs(a - b) / np.maximum(np.maximum(np.abs(a), np.abs(b)), tiny)))
