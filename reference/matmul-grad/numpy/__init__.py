"""Reference solutions of the matmul-grad round, numpy flavor."""
