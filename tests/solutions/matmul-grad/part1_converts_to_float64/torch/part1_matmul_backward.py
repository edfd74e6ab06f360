"""Converts the inputs to float64 first: right values, float64 gradients for float32 inputs."""


def matmul_backward(A, B, dC):
    if A.ndim != 2 or B.ndim != 2 or A.shape[1] != B.shape[0]:
        raise ValueError("A and B cannot be multiplied")
    if tuple(dC.shape) != (A.shape[0], B.shape[1]):
        raise ValueError("dC does not have C's shape")
    A, B, dC = (x.double() for x in (A, B, dC))
    return dC @ B.T, A.T @ dC
