import numpy as np

def matmul_backward(A, B, dC):
    if A.ndim != 2 or B.ndim != 2:
        raise ValueError("A and B must be matrices")
    M, K = A.shape
    K2, N = B.shape
    if K != K2:
        raise ValueError("inner dims differ")
    if dC.shape != (M, N):
        raise ValueError("dC shape")
    dA = np.sum(dC[:, None, :] * B[None, :, :], 2)
    dB = np.sum(A[:, :, None] * dC[:, None, :], 1)
    return dA, dB
