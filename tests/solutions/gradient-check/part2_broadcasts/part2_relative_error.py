import numpy as np


def relative_error(a, b):
    if a.size == 0:
        return 0.0
    tiny = np.finfo(a.dtype).tiny
    return float(np.max(np.abs(a - b) / np.maximum(np.maximum(np.abs(a), np.abs(b)), tiny)))
