"""Reference solutions of the normalization round, torch flavor."""
