import torch
def matmul_backward(A, B, dC):
    if A.ndim != 2 or B.ndim != 2 or A.shape[1] != B.shape[0] or dC.shape != (A.shape[0], B.shape[1]):
        raise ValueError("bad shapes")
    dA = torch.empty_like(A)
    for i in range(A.shape[0]):
        dA[i] = dC[i] @ B.T
    return dA, A.T @ dC
