import torch
def matmul_backward(A, B, dC):
    if A.ndim != 2 or B.ndim != 2 or A.shape[1] != B.shape[0] or dC.shape != (A.shape[0], B.shape[1]):
        raise ValueError("bad shapes")
    def loss(a, b):
        return float((dC * (a @ b)).sum())
    dA = torch.empty_like(A); dB = torch.empty_like(B)
    for i in range(A.shape[0]):
        for j in range(A.shape[1]):
            a1 = A.clone(); a1[i, j] += 1.0; a0 = A.clone(); a0[i, j] -= 1.0
            dA[i, j] = (loss(a1, B) - loss(a0, B)) / 2
    for i in range(B.shape[0]):
        for j in range(B.shape[1]):
            b1 = B.clone(); b1[i, j] += 1.0; b0 = B.clone(); b0[i, j] -= 1.0
            dB[i, j] = (loss(A, b1) - loss(A, b0)) / 2
    return dA, dB
