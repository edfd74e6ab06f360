"""Reference solutions of the mlp-backprop round, numpy flavor."""
