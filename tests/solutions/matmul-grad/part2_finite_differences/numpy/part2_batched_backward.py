import numpy as np

def batched_matmul_backward(A, B, dC):
    if A.ndim < 2 or B.ndim < 2 or A.shape[-1] != B.shape[-2]:
        raise ValueError("shapes")
    C = np.matmul(A, B)
    if dC.shape != C.shape:
        raise ValueError("dC")
    def loss(a, b):
        return float((dC * np.matmul(a, b)).sum())
    dA = np.empty_like(A); dB = np.empty_like(B)
    for idx in np.ndindex(*A.shape):
        a1 = A.copy(); a1[idx] += 1.0; a0 = A.copy(); a0[idx] -= 1.0
        dA[idx] = (loss(a1, B) - loss(a0, B)) / 2
    for idx in np.ndindex(*B.shape):
        b1 = B.copy(); b1[idx] += 1.0; b0 = B.copy(); b0[idx] -= 1.0
        dB[idx] = (loss(A, b1) - loss(A, b0)) / 2
    return dA, dB
