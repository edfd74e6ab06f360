import numpy as np

def matmul_backward(A, B, dC):
    A = np.asarray(A); B = np.asarray(B); dC = np.asarray(dC)
    if A.ndim != 2 or B.ndim != 2:
        raise ValueError("2-D")
    if A.shape[1] != B.shape[0]:
        raise ValueError("shapes")
    if dC.shape != (A.shape[0], B.shape[1]):
        raise ValueError("dC")
    def loss(a, b):
        return float((dC * (a @ b)).sum())
    dA = np.empty_like(A); dB = np.empty_like(B)
    for idx in np.ndindex(*A.shape):
        a1 = A.copy(); a1[idx] += 1.0
        a0 = A.copy(); a0[idx] -= 1.0
        dA[idx] = (loss(a1, B) - loss(a0, B)) / 2
    for idx in np.ndindex(*B.shape):
        b1 = B.copy(); b1[idx] += 1.0
        b0 = B.copy(); b0[idx] -= 1.0
        dB[idx] = (loss(A, b1) - loss(A, b0)) / 2
    return dA, dB
