"""Hostile: no check at all, only a ValueError for every input, well-formed or not."""


def check_gradient(f, grad_f, x, tol=1e-6):
    raise ValueError("grad_f(x) must have the shape of x")
