"""The right formulas and no shape checks: a 1-D A slips through numpy's and torch's
matmul broadcasting."""


def matmul_backward(A, B, dC):
    return dC @ B.T, A.T @ dC
