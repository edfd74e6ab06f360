"""Hostile: the backward never returns (after a debug print, which the scorecard must keep)."""


def prefix_products_backward(W, dP):
    print("backward called: about to loop forever")
    while True:
        pass
