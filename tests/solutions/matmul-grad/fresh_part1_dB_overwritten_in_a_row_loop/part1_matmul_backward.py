import numpy as np


def matmul_backward(A, B, dC):
    if A.ndim != 2 or B.ndim != 2:
        raise ValueError("need 2-D")
    M, K = A.shape
    K2, N = B.shape
    if K != K2:
        raise ValueError("inner dims")
    if dC.shape != (M, N):
        raise ValueError("dC shape")
    dA = np.zeros((M, K), dtype=np.result_type(A, B, dC))
    dB = np.zeros((K, N), dtype=np.result_type(A, B, dC))
    for m in range(M):
        # row m of C is A[m] @ B
        dA[m] = B @ dC[m]
        dB = np.outer(A[m], dC[m])
    return dA, dB
