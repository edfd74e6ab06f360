"""Hostile: a wrong answer, with numpy's comparisons patched to agree with anything."""

import numpy as np
import numpy.testing

np.allclose = lambda *args, **kwargs: True
np.isclose = lambda a, b, *args, **kwargs: np.ones(np.broadcast(a, b).shape, dtype=bool)
np.array_equal = lambda *args, **kwargs: True
numpy.testing.assert_allclose = lambda *args, **kwargs: None
numpy.testing.assert_array_equal = lambda *args, **kwargs: None
numpy.testing.assert_array_almost_equal = lambda *args, **kwargs: None


def prefix_products_out(W, P):
    P[0] = W[0]
    for i in range(1, len(W)):
        P[i] = W[i] @ P[i - 1]
    return P
