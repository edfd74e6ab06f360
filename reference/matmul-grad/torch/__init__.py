"""Reference solutions of the matmul-grad round, torch flavor."""
