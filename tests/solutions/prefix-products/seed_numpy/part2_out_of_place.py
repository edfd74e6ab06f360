"""The seed's Part 2: allocate, then reuse Part 1 (an absolute import of the package)."""

import numpy as np

from exercises.part1_inplace import prefix_products_out


def prefix_products(W: np.ndarray) -> np.ndarray:
    P = np.empty_like(W)
    return prefix_products_out(W, P)
