"""Reference solutions of the normalization round, numpy flavor."""
