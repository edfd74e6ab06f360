"""Right values, but it accumulates the adjoint inside the caller's dP."""

from .part2_out_of_place import prefix_products


def prefix_products_backward(W, dP):
    P = prefix_products(W)
    dW = W * 0
    for i in range(len(W) - 1, -1, -1):
        if i + 1 < len(W):
            dP[i] += dP[i + 1] @ W[i + 1].T
        dW[i] = dP[i] if i == 0 else P[i - 1].T @ dP[i]
    return dW
