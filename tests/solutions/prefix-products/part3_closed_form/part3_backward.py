"""Right values, wrong cost: the closed form re-forms a suffix product for every pair j <= i,
O(N^2 * D^3) instead of a running adjoint's O(N * D^3)."""

from .part2_out_of_place import prefix_products


def prefix_products_backward(W, dP):
    P = prefix_products(W)
    dW = W * 0
    for j in range(len(W)):
        total = dP[j]
        suffix = None
        for i in range(j + 1, len(W)):
            suffix = W[i] if suffix is None else suffix @ W[i]
            total = total + dP[i] @ suffix.T
        dW[j] = total if j == 0 else P[j - 1].T @ total
    return dW
