"""Reference solutions of the mlp-backprop round, torch flavor (tensors, autograd off)."""
