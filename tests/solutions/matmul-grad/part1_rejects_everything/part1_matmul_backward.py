"""Hostile: no backward at all, only a ValueError for every input, well-formed or not."""


def matmul_backward(A, B, dC):
    raise ValueError("A and B cannot be multiplied")
