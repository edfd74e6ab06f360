"""Reference solutions of the gradient-check round, numpy flavor."""
