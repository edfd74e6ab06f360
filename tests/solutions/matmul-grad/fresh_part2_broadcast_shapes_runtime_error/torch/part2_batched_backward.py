import torch


def batched_matmul_backward(A, B, dC):
    if A.dim() < 2 or B.dim() < 2:
        raise ValueError("A and B need two dimensions at least")
    if A.shape[-1] != B.shape[-2]:
        raise ValueError("inner sizes differ")
    batch = torch.broadcast_shapes(A.shape[:-2], B.shape[:-2])
    if dC.shape != (*batch, A.shape[-2], B.shape[-1]):
        raise ValueError("dC must have C's shape")
    return (dC @ B.mT).sum_to_size(A.shape), (A.mT @ dC).sum_to_size(B.shape)
